/*
 * caio.h
 *		What every caio source file shares: its SQLSTATEs, the version shims
 *		(compat.h), and the small helpers that stand between SQL-callable
 *		functions and caio's internal tables.
 */
#ifndef CAIO_H
#define CAIO_H

#include "fmgr.h"
#include "access/skey.h"
#include "executor/spi.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"
#include "nodes/pg_list.h"
#include "utils/timestamp.h"

#include "compat.h"

/* ----------------------------------------------------------------
 * caio's own SQLSTATEs (class LK: "lease"), defined once.
 * ----------------------------------------------------------------
 */
#define ERRCODE_CAIO_FENCING			MAKE_SQLSTATE('L','K','0','0','1')
#define ERRCODE_CAIO_VERSION_CONFLICT	MAKE_SQLSTATE('L','K','0','0','2')
#define ERRCODE_CAIO_FENCING_MISSING	MAKE_SQLSTATE('L','K','0','0','3')

/* Limits that the contract puts on arguments. */
#define CAIO_NAME_MAX_BYTES		255
#define CAIO_TTL_MAX_DAYS		366
#define CAIO_WAIT_MAX_DAYS		1

/* ----------------------------------------------------------------
 * caio.c: the extension's catalog, SPI plans, the switch to the owner
 * ----------------------------------------------------------------
 */

/* Where this database keeps caio's objects; reloaded after invalidation. */
typedef struct CaioCatalog
{
	Oid			schema;
	Oid			owner;			/* owner of the extension and its tables */
	Oid			lease_state;
	Oid			lease_state_pkey;
	Oid			nonce_wallet;
	Oid			nonce_wallet_pkey;
	Oid			nonce_reservation;
	Oid			nonce_reservation_pkey;
	Oid			nonce_released;
	Oid			clock;
	Oid			token_seq;
	Oid			token_epoch;	/* InvalidOid in a schema from before 0.2 */
	uint32		generation;		/* bumped whenever an OID above changes */
	const char *schema_sql;		/* quoted schema name, for SQL text */
} CaioCatalog;

extern const CaioCatalog *caio_catalog(void);

/*
 * An SPI statement prepared on first use and kept for the backend's life.
 * The SQL names caio's schema as @extschema@ and qualifies every operator,
 * because it runs as the extension owner under the caller's search_path.
 */
typedef struct CaioPlan
{
	const char *sql;
	int			nargs;
	const Oid  *argtypes;
	SPIPlanPtr	plan;
	uint32		generation;
} CaioPlan;

#define CAIO_PLAN(sql_text, types) \
	{ (sql_text), lengthof(types), (types), NULL, 0 }
#define CAIO_PLAN_NO_ARGS(sql_text) \
	{ (sql_text), 0, NULL, NULL, 0 }

/* An SPI connection that runs as the extension owner until caio_spi_end. */
typedef struct CaioSpi
{
	Oid			caller;			/* the role that called the SQL function */
	Oid			saved_user;
	int			saved_context;
} CaioSpi;

extern void caio_spi_begin(CaioSpi *spi);
extern void caio_spi_end(CaioSpi *spi);
extern uint64 caio_spi_run(CaioPlan *plan, Datum *values, const char *nulls,
						   bool read_only);
extern Datum caio_spi_value(int row, int column, bool *isnull);

/* Called for each row of an index scan; returns whether to go on. */
typedef bool (*CaioRowCallback) (struct TupleTableSlot *slot, void *arg);

extern bool caio_index_scan(Oid heap_oid, Oid index_oid, ScanKey keys,
							int nkeys, int ncolumns, CaioRowCallback callback,
							void *arg);
extern bool caio_index_first(Oid heap_oid, Oid index_oid, ScanKey keys,
							 int nkeys, Datum *values, bool *isnull,
							 int ncolumns);

/* token.c: tokens are epoch << CAIO_TOKEN_EPOCH_SHIFT | n. */
#define CAIO_TOKEN_EPOCH_SHIFT	47
extern int64 caio_token_next(void);
extern void caio_token_next_n(int64 *tokens, int n);

/* Argument checks shared by every SQL-callable function. */
extern void caio_arg_required(FunctionCallInfo fcinfo, int argno,
							  const char *what, const char *hint);
extern char *caio_arg_name(FunctionCallInfo fcinfo, int argno, const char *what);
extern Interval *caio_arg_ttl(FunctionCallInfo fcinfo, int argno);
extern int64 caio_arg_wait_usecs(FunctionCallInfo fcinfo, int argno);
extern void caio_check_finite(const Interval *span, const char *what);
extern bool caio_expiry_within_limit(TimestampTz now, TimestampTz expires_at);
extern TimestampTz caio_expiry(TimestampTz now, Interval *ttl);
extern TimestampTz caio_ago(TimestampTz now, Interval *span, const char *what);
extern void caio_check_name(const char *value, const char *what);

/* Tables that caio guards with its triggers. */
extern Relation caio_table_open(FunctionCallInfo fcinfo, int argno, LOCKMODE mode);
extern void caio_check_writable_column(Relation rel, int attnum, const char *what);
extern AttrNumber caio_table_column(Relation rel, FunctionCallInfo fcinfo,
									int argno, const char *what,
									const Oid *types, int ntypes);
extern int	caio_trigger_column(Relation rel, const char *column, const char *what,
								const Oid *types, int ntypes);
extern bool caio_type_is_one_of(Oid typid, const Oid *types, int ntypes);
pg_noreturn extern void caio_column_type_error(Relation rel, const char *column,
											   const char *what, Oid actual,
											   const Oid *types, int ntypes);
extern struct TriggerData *caio_trigger_data(FunctionCallInfo fcinfo,
											 const char *installer, int nargs);
extern void caio_table_install_trigger(Relation rel, const char *trigger_name,
									   const char *function_name, List *args,
									   int16 events);

/* ----------------------------------------------------------------
 * lease.c: leases
 * ----------------------------------------------------------------
 */
typedef struct CaioLease
{
	char	   *resource;
	char	   *holder;
	Oid			holder_role;
	int64		token;
	TimestampTz acquired_at;
	TimestampTz expires_at;
	bool		released;
} CaioLease;

extern void caio_lease_from_arg(FunctionCallInfo fcinfo, int argno, CaioLease *lease);
extern Datum caio_lease_to_datum(FunctionCallInfo fcinfo, const CaioLease *lease);
extern bool caio_lease_lookup(const char *resource, CaioLease *lease);
extern void caio_lease_check_owner(const CaioLease *lease, Oid caller,
								   const char *action);
extern void caio_lease_require_holder(const CaioLease *lease);

/* ----------------------------------------------------------------
 * fencing.c: protected tables and caio_use
 * ----------------------------------------------------------------
 */
extern void caio_fencing_init(void);
extern void caio_lease_require_current(const CaioLease *lease, CaioLease *newest);

/* ----------------------------------------------------------------
 * address.c: EVM addresses
 * ----------------------------------------------------------------
 */
extern void caio_keccak256(const uint8 *data, size_t len, uint8 digest[32]);
extern char *caio_address_parse(const char *text);
extern char *caio_arg_address(FunctionCallInfo fcinfo, int argno);

/* Errors quote at most this much of a bad argument (an address is 42). */
#define CAIO_ECHO_MAX_BYTES		80
extern char *caio_echo(const char *text);

/* ----------------------------------------------------------------
 * nonce.c: EVM nonce reservation
 * ----------------------------------------------------------------
 */
extern void caio_nonce_init(void);

/* ----------------------------------------------------------------
 * stats.c: counters in shared memory, and the log of refusals
 * ----------------------------------------------------------------
 */

/* In the order of caio_stats()'s columns. */
typedef enum CaioCounter
{
	CAIO_LEASES_GRANTED,
	CAIO_LEASES_BUSY,
	CAIO_LEASES_TAKEN_OVER,
	CAIO_LEASES_RENEWED,
	CAIO_LEASES_RENEW_LOST,
	CAIO_LEASES_RELEASED,
	CAIO_LEASES_RELEASE_LOST,
	CAIO_WRITES_ACCEPTED,
	CAIO_REFUSED_LK001,
	CAIO_REFUSED_LK002,
	CAIO_REFUSED_LK003,
	CAIO_NONCES_RESERVED,
	CAIO_NONCES_RELEASED,
	CAIO_ROWS_CLAIMED,
	CAIO_COUNTERS				/* how many there are */
} CaioCounter;

extern void caio_stats_init(void);
extern void caio_count(CaioCounter counter, uint64 n);
extern void caio_refusal(int sqlstate, Relation rel, const char *resource,
						 const char *what, const char *named, const char *current);
extern void caio_refusal_tokens(int sqlstate, Relation rel, const char *resource,
								const char *what, const int64 *named, int64 current);

/* ----------------------------------------------------------------
 * clock.c: the time every caio function reads
 * ----------------------------------------------------------------
 */
extern TimestampTz caio_clock_now(bool *frozen);
extern void caio_clock_forget(void);

/* ----------------------------------------------------------------
 * resource_lock.c: per-resource locks, and waking those who wait
 * ----------------------------------------------------------------
 */
extern uint64 caio_resource_key(const char *resource);
extern bool caio_resource_trylock(uint64 key);
extern void caio_resource_lock(uint64 key, LOCKMODE mode);
extern void caio_resource_unlock(uint64 key, LOCKMODE mode);
extern void caio_tag_lock(uint64 key, uint16 kind, LOCKMODE mode);

/* Tag spaces of caio_tag_lock; resource_lock.c keeps 17217 to 17219. */
#define CAIO_TAG_WALLET			17220	/* nonce reservation on one wallet */
extern void caio_waiter_enter(uint64 key);
extern void caio_waiter_leave(uint64 key);
extern void caio_wake_all_waiters_at_end(void);
extern void caio_resource_lock_init(void);

#endif							/* CAIO_H */
