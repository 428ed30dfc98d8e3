/*
 * catalog.h
 *		Where this database keeps caio's objects and how their rows are laid
 *		out; SPI statements prepared once and kept, run as the extension
 *		owner; and reads straight through an index for the hot paths.
 */
#ifndef CAIO_CATALOG_H
#define CAIO_CATALOG_H

#include "access/skey.h"
#include "executor/spi.h"
#include "storage/buf.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

/* Reloaded after any invalidation of one of these relations. */
typedef struct CaioCatalog
{
	Oid			extension;		/* caio's pg_extension row */
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
	Oid			lock_key;		/* InvalidOid in a schema from before 0.6.0 */
	uint32		generation;		/* bumped whenever an OID above changes */
	const char *schema_sql;		/* quoted schema name, for SQL text */
} CaioCatalog;

extern void caio_catalog_init(void);
extern const CaioCatalog *caio_catalog(void);
extern Oid	caio_member_relation(const char *name);

/*
 * The columns of caio's tables that C reads by position, as in sql/caio.sql
 * (heap attribute numbers, from 1).  A table with other columns is refused
 * by caio_index_scan.
 */
#define Natts_caio_lease_state					7
#define Anum_caio_lease_state_resource			1
#define Anum_caio_lease_state_holder			2
#define Anum_caio_lease_state_holder_role		3
#define Anum_caio_lease_state_token				4
#define Anum_caio_lease_state_acquired_at		5
#define Anum_caio_lease_state_expires_at		6
#define Anum_caio_lease_state_released_at		7

#define Natts_caio_nonce_wallet					5
#define Anum_caio_nonce_wallet_chain_id			1
#define Anum_caio_nonce_wallet_address			2
#define Anum_caio_nonce_wallet_chain_count		3
#define Anum_caio_nonce_wallet_next_nonce		4

#define Natts_caio_nonce_reservation			11
#define Anum_caio_nonce_reservation_chain_id	1
#define Anum_caio_nonce_reservation_address		2
#define Anum_caio_nonce_reservation_nonce		3
#define Anum_caio_nonce_reservation_state		4
#define Anum_caio_nonce_reservation_resource	5
#define Anum_caio_nonce_reservation_holder		6
#define Anum_caio_nonce_reservation_token		7
#define Anum_caio_nonce_reservation_tx_hash		8
#define Anum_caio_nonce_reservation_tx_hashes	9
#define Anum_caio_nonce_reservation_reserved_at	10
#define Anum_caio_nonce_reservation_updated_at	11

/*
 * An SPI statement prepared on first use and kept for the backend's life.
 * The SQL names caio's schema as @extschema@ and qualifies every operator;
 * it runs with search_path set to pg_catalog, pg_temp (caio_spi_begin).
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
	int			guc_level;		/* where caio_spi_end restores search_path */
} CaioSpi;

extern int	caio_search_path_pin(void);
extern void caio_search_path_restore(int level);
extern void caio_spi_begin(CaioSpi *spi);
extern void caio_spi_end(CaioSpi *spi);
extern uint64 caio_spi_run(CaioPlan *plan, Datum *values, const char *nulls,
						   bool read_only);
extern Datum caio_spi_value(int row, int column, bool *isnull);

extern void caio_table_check_columns(Relation heap, int ncolumns, bool exact);
extern Snapshot caio_read_snapshot(void);
extern void caio_index_keys_collate(Relation index, ScanKey keys, int nkeys);
extern bool caio_text_is(Datum value, const char *cstring);

/* Called for each row of an index scan; returns whether to go on. */
typedef bool (*CaioRowCallback) (struct TupleTableSlot *slot, void *arg);

extern bool caio_index_scan(Oid heap_oid, Oid index_oid, ScanKey keys,
							int nkeys, int ncolumns, CaioRowCallback callback,
							void *arg);
extern bool caio_index_first(Oid heap_oid, Oid index_oid, ScanKey keys,
							 int nkeys, Datum *values, bool *isnull,
							 int ncolumns);

/* Where caio_index_first_at found a row, for caio_heap_fetch. */
typedef struct CaioRowPlace
{
	ItemPointerData root;		/* the TID in the index: the HOT chain's start */
	Buffer		buffer;			/* the shared buffer that held its page */
} CaioRowPlace;

extern bool caio_index_first_at(Oid heap_oid, Oid index_oid, ScanKey keys,
								int nkeys, Datum *values, bool *isnull,
								int ncolumns, CaioRowPlace *place);
extern bool caio_heap_fetch(Oid heap_oid, const CaioRowPlace *place,
							Datum *values, bool *isnull, int ncolumns);

#endif							/* CAIO_CATALOG_H */
