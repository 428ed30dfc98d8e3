/*
 * catalog.c
 *		Where this database keeps caio's objects (looked up once, again after
 *		an invalidation), SPI statements prepared once and kept, the switch to
 *		the extension owner around them, and reads straight through an index
 *		for the hot paths.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_am.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_index.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "caio.h"
#include "catalog.h"
#include "clock.h"

static CaioCatalog catalog;

/* The catalog is good while no invalidation arrived since it was loaded. */
static uint64 catalog_invalidations = 1;
static uint64 catalog_loaded_at = 0;

/*
 * Any relcache invalidation of one of our relations or indexes (DROP
 * EXTENSION, VACUUM, REINDEX CONCURRENTLY, a clock change) or a full reset
 * makes us look the catalog up again; the lookup is cheap and plans survive
 * it unless an OID really changed.
 */
static void
caio_relcache_callback(Datum arg pg_attribute_unused(), Oid relid)
{
	const Oid	cached[] = {catalog.lease_state, catalog.lease_state_pkey,
		catalog.nonce_wallet, catalog.nonce_wallet_pkey,
		catalog.nonce_reservation, catalog.nonce_reservation_pkey,
	catalog.nonce_released, catalog.clock, catalog.token_seq,
	catalog.token_epoch, catalog.lock_key};

	if (relid == InvalidOid || relid == catalog.clock)
		caio_clock_forget();
	for (int i = 0; i < (int) lengthof(cached); i++)
		if (relid == InvalidOid || relid == cached[i])
			catalog_invalidations++;
}

void
caio_catalog_init(void)
{
	CacheRegisterRelcacheCallback(caio_relcache_callback, (Datum) 0);
}

/*
 * One of caio's relations, by its name in caio's schema, or InvalidOid when
 * the extension has none of that name.  Anyone with CREATE in the schema can
 * make a relation of any name there (one that a database still at an older
 * version lacks, say), and caio reads and writes its relations as the
 * extension owner: so a relation counts only if it belongs to the extension.
 * Indexes are found through their tables (caio_table_index).
 */
Oid
caio_member_relation(const char *name)
{
	Oid			relid = get_relname_relid(name, catalog.schema);

	if (!OidIsValid(relid) ||
		getExtensionOfObject(RelationRelationId, relid) != catalog.extension)
		return InvalidOid;
	return relid;
}

static Oid
caio_relation(const char *name)
{
	Oid			relid = caio_member_relation(name);

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"caio\" has no relation \"%s\"", name),
				 errdetail("caio uses only relations that belong to the extension."),
				 errhint("Run ALTER EXTENSION caio UPDATE, or drop and create the extension again.")));
	return relid;
}

/*
 * Whether version a is newer than b: dotted numbers, compared number by
 * number, a missing one counting as 0 ("0.4.0" is "0.4").
 */
static bool
version_newer(const char *a, const char *b)
{
	while (*a != '\0' || *b != '\0')
	{
		char	   *end;
		long		x = strtol(a, &end, 10);
		long		y;

		a = *end == '.' ? end + 1 : end;
		y = strtol(b, &end, 10);
		b = *end == '.' ? end + 1 : end;
		if (x != y)
			return x > y;
	}
	return false;
}

/*
 * A session keeps the library it loaded.  After ALTER EXTENSION caio UPDATE
 * to a version newer than that library, the session would go on making lock
 * keys and checks as the old version did, beside sessions of the new one:
 * it is refused until it reconnects.  An older schema under a newer library
 * is supported (each version reads what the schemas before it left).
 */
static void
catalog_check_version(const char *schema_version)
{
	if (version_newer(schema_version, CAIO_VERSION))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("caio's library is older than its schema in this database"),
				 errdetail("This session loaded caio's library %s, but the extension is at version %s, updated since: the two would not agree with the sessions of the new version.",
						   CAIO_VERSION, schema_version),
				 errhint("Reconnect: a new session loads the installed library.")));
}

/*
 * An index of one of caio's tables, found among that table's indexes rather
 * than by name in the schema, where anyone with CREATE can take the name
 * first: its primary key (which a script before 0.7.0 left unnamed, so a
 * relation planted under the usual name gave it another), or the index of
 * that name.
 */
static Oid
caio_table_index(Oid table, const char *name, bool primary)
{
	Relation	pg_index = table_open(IndexRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			found = InvalidOid;

	ScanKeyInit(&key, Anum_pg_index_indrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(table));
	scan = systable_beginscan(pg_index, IndexIndrelidIndexId, true, NULL, 1, &key);
	while (!OidIsValid(found) && HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_index index = (Form_pg_index) GETSTRUCT(tuple);
		char	   *index_name = get_rel_name(index->indexrelid);

		if (primary ? index->indisprimary
			: (index_name != NULL && strcmp(index_name, name) == 0))
			found = index->indexrelid;
	}
	systable_endscan(scan);
	table_close(pg_index, AccessShareLock);
	if (!OidIsValid(found))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"caio\" has no index \"%s\" on table \"%s\"",
						name, get_rel_name(table)),
				 errdetail("caio reads its tables through the indexes it made on them."),
				 errhint("Drop and create the extension again.")));
	return found;
}

static void
catalog_load(void)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	Form_pg_extension ext;
	Oid			old_schema = catalog.schema;
	Oid			old_lease_state = catalog.lease_state;
	Datum		version;
	bool		isnull;
	char	   *schema_version;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("caio"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"caio\" is not installed in this database"),
				 errhint("Run CREATE EXTENSION caio.")));
	ext = (Form_pg_extension) GETSTRUCT(tuple);
	catalog.extension = ext->oid;
	catalog.schema = ext->extnamespace;
	catalog.owner = ext->extowner;
	version = heap_getattr(tuple, Anum_pg_extension_extversion,
						   RelationGetDescr(rel), &isnull);
	schema_version = isnull ? "" : TextDatumGetCString(version);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	catalog_check_version(schema_version);

	catalog.lease_state = caio_relation("caio_lease_state");
	catalog.lease_state_pkey = caio_table_index(catalog.lease_state,
												"caio_lease_state_pkey", true);
	catalog.nonce_wallet = caio_relation("caio_nonce_wallet");
	catalog.nonce_wallet_pkey = caio_table_index(catalog.nonce_wallet,
												 "caio_nonce_wallet_pkey", true);
	catalog.nonce_reservation = caio_relation("caio_nonce_reservation");
	catalog.nonce_reservation_pkey = caio_table_index(catalog.nonce_reservation,
													  "caio_nonce_reservation_pkey", true);
	catalog.nonce_released = caio_table_index(catalog.nonce_reservation,
											  "caio_nonce_released", false);
	catalog.clock = caio_relation("caio_clock");
	catalog.token_seq = caio_relation("caio_token_seq");
	/* Missing until ALTER EXTENSION caio UPDATE from 0.1. */
	catalog.token_epoch = caio_member_relation("caio_token_epoch");
	/* Missing until ALTER EXTENSION caio UPDATE from 0.5.0 or earlier. */
	catalog.lock_key = caio_member_relation("caio_lock_key");

	if (catalog.schema != old_schema || catalog.lease_state != old_lease_state)
		catalog.generation++;
	/*
	 * A load that failed part-way (a relation missing from the extension)
	 * may have set the schema already: its quoted name is made here too.
	 */
	if (catalog.schema != old_schema || catalog.schema_sql == NULL)
	{
		char	   *name = get_namespace_name(catalog.schema);

		catalog.schema_sql = MemoryContextStrdup(TopMemoryContext,
												 quote_identifier(name));
	}
}

const CaioCatalog *
caio_catalog(void)
{
	/* An invalidation during the lookup, or a failed lookup: look again. */
	while (catalog_loaded_at != catalog_invalidations)
	{
		uint64		seen = catalog_invalidations;

		catalog_load();
		catalog_loaded_at = seen;
	}
	return &catalog;
}

static SPIPlanPtr
caio_plan(CaioPlan *p)
{
	const CaioCatalog *cat = caio_catalog();
	StringInfoData sql;
	const char *at;
	const char *mark = "@extschema@";

	if (p->plan != NULL && p->generation == cat->generation)
		return p->plan;

	if (p->plan != NULL)
		SPI_freeplan(p->plan);
	p->plan = NULL;

	initStringInfo(&sql);
	for (at = p->sql; *at; at++)
	{
		if (strncmp(at, mark, strlen(mark)) == 0)
		{
			appendStringInfoString(&sql, cat->schema_sql);
			at += strlen(mark) - 1;
		}
		else
			appendStringInfoChar(&sql, *at);
	}

	/* A generic plan: re-planning every call would cost more than it saves. */
	p->plan = SPI_prepare_cursor(sql.data, p->nargs, (Oid *) p->argtypes,
								 CURSOR_OPT_GENERIC_PLAN);
	if (p->plan == NULL)
		elog(ERROR, "caio could not prepare \"%s\": %s",
			 sql.data, SPI_result_code_string(SPI_result));
	SPI_keepplan(p->plan);
	p->generation = cat->generation;
	pfree(sql.data);
	return p->plan;
}

/*
 * caio's SQL names its schema, functions and operators in full; still, it
 * runs with search_path pinned to pg_catalog, pg_temp, as amcheck does, so
 * that nothing in a caller's schemas can ever be found by it, and so that
 * the kept plans are not planned again whenever a caller's search_path
 * differs.  Returns the GUC nest level that caio_search_path_restore ends.
 * An error restores the caller's search_path too: (sub)transaction abort
 * unwinds the nest level.
 */
int
caio_search_path_pin(void)
{
	int			level = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return level;
}

void
caio_search_path_restore(int level)
{
	AtEOXact_GUC(false, level);
}

/*
 * Callers hold no privileges on caio's tables; the functions act for them as
 * the extension owner, in a security-restricted context, much as a SECURITY
 * DEFINER function would, but without losing sight of who called.  An error
 * anywhere restores the user: transaction abort resets it.
 */
void
caio_spi_begin(CaioSpi *spi)
{
	const CaioCatalog *cat = caio_catalog();

	spi->caller = GetUserId();
	GetUserIdAndSecContext(&spi->saved_user, &spi->saved_context);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	SetUserIdAndSecContext(cat->owner,
						   spi->saved_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	spi->guc_level = caio_search_path_pin();
}

void
caio_spi_end(CaioSpi *spi)
{
	caio_search_path_restore(spi->guc_level);
	SetUserIdAndSecContext(spi->saved_user, spi->saved_context);
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
}

/*
 * Run a statement on caio's tables.  They are the authority on leases, so we
 * read the newest committed state (and our own changes) whatever the isolation
 * level, as PostgreSQL's own foreign-key checks do under REPEATABLE READ; the
 * per-resource lock that callers hold keeps that state from moving under us.
 */
uint64
caio_spi_run(CaioPlan *p, Datum *values, const char *nulls, bool read_only)
{
	SPIPlanPtr	plan = caio_plan(p);
	int			rc;

	CommandCounterIncrement();
	rc = SPI_execute_snapshot(plan, values, nulls, GetLatestSnapshot(),
							  InvalidSnapshot, read_only, true, 0);
	if (rc < 0)
		elog(ERROR, "caio statement failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

Datum
caio_spi_value(int row, int column, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc,
						 column, isnull);
}

/*
 * C reads and writes caio's tables by column position: a table with more
 * columns than it knows (or, to write a whole row, fewer) is not its own.
 */
void
caio_table_check_columns(Relation heap, int ncolumns, bool exact)
{
	int			natts = RelationGetDescr(heap)->natts;

	if (natts > ncolumns || (exact && natts != ncolumns))
		elog(ERROR, "caio's table \"%s\" has %d columns, not %d",
			 RelationGetRelationName(heap), natts, ncolumns);
}

/*
 * caio's tables are opened and closed around each read; their locks stay
 * until the transaction ends, as the executor's do: letting them go and
 * taking them again for the next row (a fenced UPDATE of many rows) would
 * cost a lock table round trip each time.
 */
static Relation
read_open(Oid heap_oid, int ncolumns)
{
	Relation	heap = table_open(heap_oid, AccessShareLock);

	caio_table_check_columns(heap, ncolumns, false);
	return heap;
}

/*
 * Like caio_spi_run, caio's reads (and the reads before its writes) see the
 * newest committed state and this transaction's own changes.  The caller
 * unregisters the snapshot.
 */
Snapshot
caio_read_snapshot(void)
{
	CommandCounterIncrement();
	return RegisterSnapshot(GetLatestSnapshot());
}

/* Scan keys on an index compare under the index's collations. */
void
caio_index_keys_collate(Relation index, ScanKey keys, int nkeys)
{
	for (int i = 0; i < nkeys; i++)
		keys[i].sk_collation = index->rd_indcollation[keys[i].sk_attno - 1];
}

/* Whether a text datum holds exactly these bytes. */
bool
caio_text_is(Datum value, const char *cstring)
{
	text	   *t = DatumGetTextPP(value);
	size_t		len = strlen(cstring);

	return VARSIZE_ANY_EXHDR(t) == len && memcmp(VARDATA_ANY(t), cstring, len) == 0;
}

/*
 * The index scan of caio_index_scan; place, unless NULL, gets where the last
 * row handed over was: the heap TID that the index holds for it (where the
 * row's HOT chain starts) and the buffer its page was in, for
 * caio_heap_fetch.
 */
static bool
index_scan(Oid heap_oid, Oid index_oid, ScanKey keys, int nkeys, int ncolumns,
		   CaioRowCallback callback, void *arg, CaioRowPlace *place)
{
	Relation	heap = read_open(heap_oid, ncolumns);
	Relation	index = index_open(index_oid, AccessShareLock);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	Snapshot	snapshot;
	IndexScanDesc scan;
	ItemPointer tid;
	bool		found = false;

	caio_index_keys_collate(index, keys, nkeys);
	snapshot = caio_read_snapshot();
	scan = caio_index_beginscan(heap, index, snapshot, nkeys, 0);
	index_rescan(scan, keys, nkeys, NULL, 0);
	/* index_getnext_slot's loop, keeping the TID before the fetch moves it. */
	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		ItemPointerData chain = *tid;

		if (!index_fetch_heap(scan, slot))
			continue;
		found = true;
		if (place != NULL)
		{
			place->root = chain;
			place->buffer = TTS_IS_BUFFERTUPLE(slot)
				? ((BufferHeapTupleTableSlot *) slot)->buffer : InvalidBuffer;
		}
		slot_getallattrs(slot);
		if (!callback(slot, arg))
			break;
	}

	index_endscan(scan);
	UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, NoLock);
	table_close(heap, NoLock);
	return found;
}

/*
 * Hand the rows that an index scan with these keys finds, in the index's
 * order, to a callback until it returns false; false when there was none.
 * Read straight through the index: the hot paths use this instead of SPI.
 * Like caio_spi_run it sees the newest committed state and this
 * transaction's own changes.  The callback gets the slot with every column
 * deformed; the values are valid until it returns.
 */
bool
caio_index_scan(Oid heap_oid, Oid index_oid, ScanKey keys, int nkeys,
				int ncolumns, CaioRowCallback callback, void *arg)
{
	return index_scan(heap_oid, index_oid, keys, nkeys, ncolumns, callback,
					  arg, NULL);
}

/* Deformed columns that point into a buffer, copied into our memory. */
static void
datums_copy(TupleDesc desc, Datum *values, const bool *isnull)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		values[i] = isnull[i] ? (Datum) 0 :
			datumCopy(values[i], attr->attbyval, attr->attlen);
	}
}

typedef struct RowCopy
{
	Datum	   *values;
	bool	   *isnull;
} RowCopy;

static bool
row_copy(TupleTableSlot *slot, void *arg)
{
	RowCopy    *copy = (RowCopy *) arg;
	TupleDesc	desc = slot->tts_tupleDescriptor;

	memcpy(copy->values, slot->tts_values, desc->natts * sizeof(Datum));
	memcpy(copy->isnull, slot->tts_isnull, desc->natts * sizeof(bool));
	datums_copy(desc, copy->values, copy->isnull);
	return false;
}

/*
 * The first row that an index scan with these keys finds in a table; its
 * columns are copied into values and isnull.
 */
bool
caio_index_first(Oid heap_oid, Oid index_oid, ScanKey keys, int nkeys,
				 Datum *values, bool *isnull, int ncolumns)
{
	return caio_index_first_at(heap_oid, index_oid, keys, nkeys, values,
							   isnull, ncolumns, NULL);
}

/* caio_index_first, and where the row was, for caio_heap_fetch. */
bool
caio_index_first_at(Oid heap_oid, Oid index_oid, ScanKey keys, int nkeys,
					Datum *values, bool *isnull, int ncolumns, CaioRowPlace *place)
{
	RowCopy		copy;

	copy.values = values;
	copy.isnull = isnull;
	return index_scan(heap_oid, index_oid, keys, nkeys, ncolumns, row_copy,
					  &copy, place);
}

/* A heap tuple's columns, copied out of its buffer. */
static void
tuple_copy(HeapTuple tuple, TupleDesc desc, Datum *values, bool *isnull)
{
	heap_deform_tuple(tuple, desc, values, isnull);
	datums_copy(desc, values, isnull);
}

/*
 * The version of a row that caio_index_first would find, read from the HOT
 * chain at the place that caio_index_first_at gave for it, without the
 * index descent; its columns are copied as caio_index_first copies them.
 * Only while the page is still in the same shared buffer: then the block
 * still exists (a truncation or a rewrite drops its buffers), which a block
 * number alone cannot tell without asking the kernel for the file's size.
 * False when it is not there, or the chain has no version this transaction
 * can see.  Any row can be found there (the line pointer may have been
 * reused): the caller checks that it is the one it looks for, and looks it
 * up through the index otherwise.  When it is, it is the newest committed
 * version, as the index would have given: a snapshot sees one version of a
 * row at most, and the row's key is unique.
 */
bool
caio_heap_fetch(Oid heap_oid, const CaioRowPlace *place, Datum *values,
				bool *isnull, int ncolumns)
{
	Relation	heap = read_open(heap_oid, ncolumns);
	ItemPointerData tid = place->root;
	HeapTupleData tuple;
	bool		all_dead;
	bool		found = false;

	if (heap->rd_rel->relam == HEAP_TABLE_AM_OID && BufferIsValid(place->buffer) &&
		ReadRecentBuffer(CAIO_REL_LOCATOR(heap), MAIN_FORKNUM,
						 ItemPointerGetBlockNumber(&tid), place->buffer))
	{
		Snapshot	snapshot = caio_read_snapshot();

		/* As an index fetch does: dead versions left by renewals go early. */
		heap_page_prune_opt(heap, place->buffer);
		LockBuffer(place->buffer, BUFFER_LOCK_SHARE);
		found = heap_hot_search_buffer(&tid, heap, place->buffer, snapshot, &tuple,
									   &all_dead, true);
		if (found)
			tuple_copy(&tuple, RelationGetDescr(heap), values, isnull);
		LockBuffer(place->buffer, BUFFER_LOCK_UNLOCK);
		ReleaseBuffer(place->buffer);
		UnregisterSnapshot(snapshot);
	}
	table_close(heap, NoLock);
	return found;
}
