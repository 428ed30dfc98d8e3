/*
 * guard.h
 *		The user tables that caio guards with its triggers: opening one for
 *		its owner, checking the columns a caller or a trigger names, and
 *		installing caio's triggers.
 */
#ifndef CAIO_GUARD_H
#define CAIO_GUARD_H

#include "fmgr.h"
#include "nodes/pg_list.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

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
extern const char *caio_guard_installer(Oid funcoid);
extern char *caio_guard_trigger_gap(const char *table, const struct Trigger *trigger);
extern void caio_check_guard_trigger(Relation rel, const struct Trigger *trigger,
									 int sqlerrcode);
extern void caio_table_install_trigger(Relation rel, const char *trigger_name,
									   const char *function_name, List *args,
									   int16 events);

/* caio's trigger functions (fencing.c, claims.c, versioned.c). */
extern Datum caio_fence_trigger(PG_FUNCTION_ARGS);
extern Datum caio_claim_trigger(PG_FUNCTION_ARGS);
extern Datum caio_version_trigger(PG_FUNCTION_ARGS);

#endif							/* CAIO_GUARD_H */
