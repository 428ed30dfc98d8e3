/*
 * fencing.c
 *		Fencing where the data lives: the trigger that caio_protect installs on
 *		a user's table, and caio_use, which names a lease for a transaction.
 *
 * Each row of a protected table belongs to the resource
 * resource_prefix || resource_column.  A write must name the newest token of
 * that resource: in the token column (an INSERT, or an UPDATE that sets the
 * column), or through caio_use earlier in the transaction.  The check holds
 * the resource's lock in share mode until the transaction ends, so no new
 * lease can be granted while a write under the old one is in flight, and a
 * write that queues behind a takeover sees the new token and is refused.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "caio.h"
#include "args.h"
#include "catalog.h"
#include "citus.h"
#include "fencing.h"
#include "guard.h"
#include "lease.h"
#include "merge.h"
#include "refusal.h"
#include "resource_lock.h"
#include "stats.h"
#include "search_path.h"

PG_FUNCTION_INFO_V1(caio_protect);
PG_FUNCTION_INFO_V1(caio_use);
PG_FUNCTION_INFO_V1(caio_fence_trigger);

#define FENCE_TRIGGER_NAME	"caio_fence"

static const Oid token_types[] = {INT8OID};

/*
 * Types whose text form, which names the resource, does not depend on
 * session settings (a date's would follow DateStyle, and two sessions could
 * then name one row's resource differently).
 */
static const Oid resource_types[] = {TEXTOID, VARCHAROID, BPCHAROID, NAMEOID,
INT2OID, INT4OID, INT8OID, NUMERICOID, UUIDOID};

/* ----------------------------------------------------------------
 * Leases named by caio_use in the current transaction
 * ----------------------------------------------------------------
 */

typedef struct UsedLease
{
	char	   *resource;
	int64		token;
	SubTransactionId subxid;	/* forgotten if this subtransaction aborts */
} UsedLease;

static UsedLease *used_leases = NULL;
static int	used_count = 0;
static int	used_size = 0;

static void fence_layout_invalidate(Datum arg, Oid relid);

/* Entries stay in the order they were named: a later one shadows an earlier. */
static void
forget_used(int i)
{
	pfree(used_leases[i].resource);
	memmove(&used_leases[i], &used_leases[i + 1],
			(used_count - i - 1) * sizeof(UsedLease));
	used_count--;
}

static UsedLease *
used_lease_for(const char *resource)
{
	for (int i = used_count - 1; i >= 0; i--)
		if (strcmp(used_leases[i].resource, resource) == 0)
			return &used_leases[i];
	return NULL;
}

/*
 * A subtransaction that names another token for a resource shadows the
 * outer level's entry instead of replacing it, so that rolling the
 * subtransaction back brings the outer one back.
 */
static void
remember_used(const char *resource, int64 token)
{
	UsedLease  *used = used_lease_for(resource);
	SubTransactionId subxid = GetCurrentSubTransactionId();

	if (used != NULL && used->token == token)
		return;					/* named already, maybe in an outer level */
	if (used == NULL || used->subxid != subxid)
	{
		if (used_count == used_size)
		{
			used_size = Max(8, used_size * 2);
			used_leases = used_leases == NULL
				? MemoryContextAlloc(TopMemoryContext, used_size * sizeof(UsedLease))
				: repalloc(used_leases, used_size * sizeof(UsedLease));
		}
		used = &used_leases[used_count++];
		used->resource = MemoryContextStrdup(TopMemoryContext, resource);
		used->subxid = subxid;
	}
	used->token = token;
}

/* caio_use lasts until the transaction ends: its lock does too. */
static void
fencing_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			while (used_count > 0)
				forget_used(used_count - 1);
			break;
		default:
			break;
	}
}

/* A subtransaction that aborts takes its caio_use (and its lock) with it. */
static void
fencing_subxact_callback(SubXactEvent event, SubTransactionId subxid,
						 SubTransactionId parent, void *arg pg_attribute_unused())
{
	for (int i = used_count - 1; i >= 0; i--)
	{
		if (used_leases[i].subxid < subxid)
			continue;
		if (event == SUBXACT_EVENT_ABORT_SUB)
			forget_used(i);
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
			used_leases[i].subxid = parent;
	}
}

void
caio_fencing_init(void)
{
	RegisterXactCallback(fencing_xact_callback, NULL);
	RegisterSubXactCallback(fencing_subxact_callback, NULL);
	CacheRegisterRelcacheCallback(fence_layout_invalidate, (Datum) 0);
}

/* ----------------------------------------------------------------
 * caio_use
 * ----------------------------------------------------------------
 */

Datum
caio_use(PG_FUNCTION_ARGS)
{
	CaioLease	lease;
	CaioLease	newest;

	caio_require_trusted_search_path_for_superuser("caio_use");
	caio_citus_serve_here("leases");

	caio_lease_from_arg(fcinfo, 0, &lease);
	caio_lease_require_current(&lease, &newest);
	remember_used(lease.resource, lease.token);
	newest.resource = lease.resource;
	PG_RETURN_DATUM(caio_lease_to_datum(fcinfo, &newest));
}

/* ----------------------------------------------------------------
 * caio_protect and its trigger
 * ----------------------------------------------------------------
 */

Datum
caio_protect(PG_FUNCTION_ARGS)
{
	Relation	rel;
	AttrNumber	token_att;
	AttrNumber	resource_att;
	char	   *prefix;
	List	   *args;

	caio_require_trusted_search_path("caio_protect");
	rel = caio_table_open(fcinfo, 0, ShareRowExclusiveLock);
	token_att = caio_table_column(rel, fcinfo, 1, "token column",
								  token_types, lengthof(token_types));
	resource_att = caio_table_column(rel, fcinfo, 2, "resource column",
									 resource_types, lengthof(resource_types));
	if (token_att == resource_att)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the token column and the resource column must differ")));
	caio_arg_required(fcinfo, 3, "resource_prefix", "Pass '' for no prefix.");
	prefix = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (strlen(prefix) >= CAIO_NAME_MAX_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resource_prefix is too long"),
				 errdetail("A resource is at most %d bytes, prefix included; this prefix is %zu bytes.",
						   CAIO_NAME_MAX_BYTES, strlen(prefix))));

	/* cppcheck-suppress unknownEvaluationOrder ; list_make3's cells are independent */
	args = list_make3(makeString(NameStr(*PG_GETARG_NAME(1))),
					  makeString(NameStr(*PG_GETARG_NAME(2))),
					  makeString(prefix));
	caio_table_install_trigger(rel, FENCE_TRIGGER_NAME, "caio_fence_trigger", args,
							   TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE |
							   TRIGGER_TYPE_DELETE);
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

/*
 * What a trigger's arguments say about its table, kept per trigger for the
 * backend's life: the column lookups, their type checks and the resource's
 * output function are set-up that every row would otherwise repeat.  An
 * entry is checked again after any relcache invalidation of its table
 * (ALTER TABLE, a new trigger), so a renamed, dropped or retyped column is
 * still refused as when the trigger looked it up on every row.
 */
typedef struct FenceLayout
{
	Oid			trigger;		/* hash key */
	Oid			relid;
	bool		valid;
	int			token_att;
	int			resource_att;
	bool		resource_is_text;	/* text, varchar or bpchar: the bytes are its text */
	bool		resource_byval;
	int16		resource_len;
	FmgrInfo	resource_out;
	Oid			token_domain;	/* the token column's domain, or InvalidOid */
	MemoryContext domain_cxt;	/* domain_check's cache for token_domain */
	void	   *domain_extra;
} FenceLayout;

static HTAB *fence_layouts = NULL;

static void
fence_layout_invalidate(Datum arg pg_attribute_unused(), Oid relid)
{
	HASH_SEQ_STATUS seq;
	FenceLayout *layout;

	if (fence_layouts == NULL)
		return;
	hash_seq_init(&seq, fence_layouts);
	while ((layout = hash_seq_search(&seq)) != NULL)
		if (relid == InvalidOid || layout->relid == relid)
			layout->valid = false;
}

/*
 * The executor checks a column's domain on the values a statement writes,
 * not on what a BEFORE trigger puts into the row afterwards: a token that
 * caio_use fills in must pass the token column's domain here, or a domain
 * the user wrote an INSERT of that token against would not hold.  A plain
 * bigint column has no domain and costs nothing.  domain_check's cache
 * lives in a context of the layout's own, kept while the column's type stays
 * the same (the cache follows changes to the domain's constraints itself)
 * and deleted with it, which also lets go of the type cache's reference.
 */
static void
fence_layout_domain(FenceLayout *layout, Oid token_type)
{
	Oid			domain = token_type == INT8OID ? InvalidOid : token_type;

	if (layout->token_domain == domain)
		return;
	if (layout->domain_cxt != NULL)
		MemoryContextDelete(layout->domain_cxt);
	layout->domain_cxt = NULL;
	layout->domain_extra = NULL;
	layout->token_domain = domain;
	if (OidIsValid(domain))
		layout->domain_cxt = AllocSetContextCreate(TopMemoryContext,
												   "caio fence token domain",
												   ALLOCSET_SMALL_SIZES);
}

static void
fence_layout_load(FenceLayout *layout, Relation rel, const Trigger *trigger)
{
	Oid			type;
	Oid			output;
	bool		varlena;

	layout->relid = RelationGetRelid(rel);
	layout->token_att = caio_trigger_column(rel, trigger->tgargs[0], "token column",
											token_types, lengthof(token_types));
	fence_layout_domain(layout, TupleDescAttr(RelationGetDescr(rel),
											  layout->token_att - 1)->atttypid);
	layout->resource_att = caio_trigger_column(rel, trigger->tgargs[1],
											   "resource column", resource_types,
											   lengthof(resource_types));
	type = getBaseType(TupleDescAttr(RelationGetDescr(rel),
									 layout->resource_att - 1)->atttypid);
	layout->resource_is_text = type == TEXTOID || type == VARCHAROID || type == BPCHAROID;
	get_typlenbyval(type, &layout->resource_len, &layout->resource_byval);
	getTypeOutputInfo(type, &output, &varlena);
	fmgr_info_cxt(output, &layout->resource_out, TopMemoryContext);
	layout->valid = true;
}

static FenceLayout *
fence_layout(Relation rel, const Trigger *trigger)
{
	FenceLayout *layout;
	bool		found;

	if (fence_layouts == NULL)
	{
		HASHCTL		ctl = {.keysize = sizeof(Oid),.entrysize = sizeof(FenceLayout)};

		fence_layouts = hash_create("caio fence triggers", 16, &ctl,
									HASH_ELEM | HASH_BLOBS);
	}
	layout = hash_search(fence_layouts, &trigger->tgoid, HASH_ENTER, &found);
	if (!found)
	{
		layout->token_domain = InvalidOid;
		layout->domain_cxt = NULL;
		layout->domain_extra = NULL;
	}
	if (!found || layout->relid != RelationGetRelid(rel))
		layout->valid = false;
	if (!layout->valid)
		fence_layout_load(layout, rel, trigger);
	return layout;
}

/* What the trigger's arguments say about the table it fires on. */
typedef struct FenceSpec
{
	Relation	rel;
	TupleDesc	desc;
	const char *token_column;
	const char *prefix;
	FenceLayout *layout;		/* mutable: domain_check fills its cache */
} FenceSpec;

static void
fence_spec(FunctionCallInfo fcinfo, FenceSpec *spec)
{
	TriggerData *td = caio_trigger_data(fcinfo, "caio_protect", 3);

	spec->rel = td->tg_relation;
	spec->desc = RelationGetDescr(td->tg_relation);
	spec->token_column = td->tg_trigger->tgargs[0];
	spec->prefix = td->tg_trigger->tgargs[2];
	spec->layout = fence_layout(spec->rel, td->tg_trigger);
}

/* A row's resource column; null is refused. */
static Datum
fence_resource_value(const FenceSpec *spec, HeapTuple row)
{
	bool		isnull;
	Datum		value = heap_getattr(row, spec->layout->resource_att, spec->desc, &isnull);

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("row of protected table \"%s\" has no resource",
						RelationGetRelationName(spec->rel)),
				 errdetail("Column \"%s\" is null.",
						   SPI_fname(spec->desc, spec->layout->resource_att)),
				 errtable(spec->rel)));
	return value;
}

/*
 * resource_prefix || resource_column of a row, computed as the writer.  A
 * text column's bytes are its text form, so they are copied behind the
 * prefix without a call to the output function.
 */
static char *
fence_resource(const FenceSpec *spec, Datum value)
{
	char	   *resource;

	if (spec->layout->resource_is_text)
	{
		text	   *t = DatumGetTextPP(value);
		size_t		prefix_len = strlen(spec->prefix);
		size_t		len = VARSIZE_ANY_EXHDR(t);

		resource = palloc(prefix_len + len + 1);
		memcpy(resource, spec->prefix, prefix_len);
		memcpy(resource + prefix_len, VARDATA_ANY(t), len);
		resource[prefix_len + len] = '\0';
	}
	else
		resource = psprintf("%s%s", spec->prefix,
							OutputFunctionCall((FmgrInfo *) &spec->layout->resource_out,
											   value));
	caio_check_name(resource, "resource");
	return resource;
}

static bool
fence_token_of(const FenceSpec *spec, HeapTuple row, int64 *token)
{
	bool		isnull;
	Datum		value = heap_getattr(row, spec->layout->token_att, spec->desc, &isnull);

	if (!isnull)
		*token = DatumGetInt64(value);
	return !isnull;
}

/*
 * What a write names for its row: a token (named, token), or none, and then
 * why (missing); and the token the row carried before (an UPDATE's).
 */
typedef struct FenceNamed
{
	bool		named;
	int64		token;
	CaioTokenMissing missing;
	bool		has_row_token;
	int64		row_token;
} FenceNamed;

/*
 * What the trigger's write names: an INSERT, the token column's value; an
 * UPDATE, the value if it sets the column (caio_update_sets); a DELETE,
 * nothing.  A MERGE action that caio cannot tell apart from its siblings
 * names the value only if it changed the row's token, which an action that
 * leaves the column alone cannot do; one that kept it names nothing.  So
 * does an UPDATE that caio could not see (it started before caio loaded).
 */
static void
fence_named(const TriggerData *td, const FenceSpec *spec, FenceNamed *names)
{
	CaioColumnWrite sets;

	memset(names, 0, sizeof(*names));
	names->missing = CAIO_TOKEN_NOT_SET;
	if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
	{
		names->missing = CAIO_TOKEN_DELETE;
		return;
	}
	names->named = fence_token_of(spec, TRIGGER_FIRED_BY_INSERT(td->tg_event)
								  ? td->tg_trigtuple : td->tg_newtuple,
								  &names->token);
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		return;

	names->has_row_token = fence_token_of(spec, td->tg_trigtuple, &names->row_token);
	sets = caio_update_sets(td, spec->layout->token_att);
	switch (sets)
	{
		case CAIO_COLUMN_SET:
			break;
		case CAIO_COLUMN_KEPT:
			names->named = false;
			break;
		case CAIO_COLUMN_UNKNOWN:
		case CAIO_COLUMN_UNSEEN:
			if (names->named == names->has_row_token &&
				(!names->named || names->token == names->row_token))
			{
				names->named = false;
				names->missing = sets == CAIO_COLUMN_UNSEEN
					? CAIO_TOKEN_UNSEEN : CAIO_TOKEN_MERGE_UNKNOWN;
			}
			break;
	}
}

/*
 * Check the write under the resource's lock (kept until the transaction
 * ends) and return the token it writes under: the one it named, or the one
 * caio_use named for the resource.
 */
static int64
fence_check(const FenceSpec *spec, const char *resource, const FenceNamed *names)
{
	CaioLease	newest;
	bool		found = caio_lease_pin(resource, &newest);
	UsedLease  *used = names->named ? NULL : used_lease_for(resource);
	int64		token = names->token;

	if (!names->named && used == NULL)
		caio_refuse_missing_token(spec->rel, resource, spec->token_column,
								  found ? &newest : NULL, names->missing);
	if (!names->named)
		token = used->token;
	if (!found || !caio_lease_is_current(&newest, token, NULL) ||
		(names->has_row_token && names->row_token > token))
		caio_refuse_stale_write(spec->rel, resource, token,
								found ? &newest : NULL, names->row_token);
	return token;
}

/* Write the token that caio_use named into the row, through its domain. */
static HeapTuple
fence_fill_token(const FenceSpec *spec, HeapTuple row, int64 token)
{
	FenceLayout *layout = spec->layout;
	int			column = layout->token_att;
	Datum		value = Int64GetDatum(token);
	bool		isnull = false;

	if (OidIsValid(layout->token_domain))
		domain_check(value, false, layout->token_domain, &layout->domain_extra,
					 layout->domain_cxt);

	return heap_modify_tuple_by_cols(row, spec->desc, 1, &column, &value, &isnull);
}

Datum
caio_fence_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	FenceSpec	spec;
	FenceNamed	names;
	HeapTuple	written;
	HeapTuple	new_row = NULL;
	Datum		value;
	char	   *resource;
	int64		token;

	caio_citus_serve_here("fenced writes");

	fence_spec(fcinfo, &spec);
	/* The row written: the new one of an INSERT or UPDATE, the deleted one. */
	written = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;
	if (!TRIGGER_FIRED_BY_DELETE(td->tg_event))
		new_row = written;

	value = fence_resource_value(&spec, written);
	resource = fence_resource(&spec, value);
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		Datum		old_value = fence_resource_value(&spec, td->tg_trigtuple);
		char	   *old_resource;

		/* The same bytes name the same resource: one text form is enough. */
		old_resource = datumIsEqual(old_value, value, spec.layout->resource_byval,
									spec.layout->resource_len)
			? resource : fence_resource(&spec, old_value);
		if (strcmp(old_resource, resource) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("row of protected table \"%s\" cannot move from resource \"%s\" to \"%s\"",
							RelationGetRelationName(spec.rel), old_resource, resource),
					 errhint("Delete the row under the first resource's lease and insert it under the second's."),
					 errtable(spec.rel)));
	}

	fence_named(td, &spec, &names);
	token = fence_check(&spec, resource, &names);
	caio_count(CAIO_WRITES_ACCEPTED, 1);

	if (new_row == NULL)
		return PointerGetDatum(td->tg_trigtuple);
	if (!names.named)
		new_row = fence_fill_token(&spec, new_row, token);
	return PointerGetDatum(new_row);
}
