/*
 * search_path.c
 *		Refuses to run the calls a role could capture with a planted function.
 *
 * A call with untyped literals, caio_protect('transfers', 'fence_token',
 * 'wallet'), resolves toward text: a caio_protect(text, text, text) that
 * another role created in any schema of the caller's search_path is a
 * better match than caio's (regclass, name, name, text), and runs instead
 * of it, with the caller's privileges.  caio cannot see such a call (its
 * own function never runs), so it refuses the set-up that makes the
 * capture possible, whenever one of its functions does run: a schema of
 * the caller's search_path in which a role the caller cannot trust may
 * create objects; caio's own schema counts as one of the path, since a
 * call qualified with it is as capturable.  Trusted are the caller
 * itself, superusers, the extension's owner and the database's owner (who
 * owns public since PostgreSQL 15); any other owner of such a schema, or
 * grantee of CREATE on it, PUBLIC included, is not.  The install and
 * update scripts make the same check of caio's own schema.
 *
 * The outcome is cached per role and search path, and forgotten when a
 * schema's, role's or database's catalog row changes.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "catalog/pg_namespace.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "caio.h"
#include "catalog.h"
#include "search_path.h"

/* The role and search path last found trusted; NIL when none is. */
static Oid	trusted_role = InvalidOid;
static List *trusted_path = NIL;
static bool callbacks_registered = false;

static void
forget_trusted_path(Datum arg, int cacheid, uint32 hashvalue)
{
	(void) arg;
	(void) cacheid;
	(void) hashvalue;
	trusted_role = InvalidOid;
}

static bool
role_is_trusted(Oid role, Oid caller, Oid db_owner)
{
	if (role == caller || role == db_owner || role == ROLE_PG_DATABASE_OWNER ||
		role == caio_catalog()->owner)
		return true;
	return role != ACL_ID_PUBLIC && superuser_arg(role);
}

/*
 * Whether a role other than the trusted ones may create objects in the
 * schema (its owner, or a grantee of CREATE), and which: *creator is
 * ACL_ID_PUBLIC (0) for PUBLIC.
 */
static bool
untrusted_creator(Oid schema, Oid caller, Oid db_owner, Oid *creator,
				  bool *is_owner)
{
	HeapTuple	tuple;
	Form_pg_namespace form;
	Datum		acl_datum;
	bool		acl_null;
	Acl		   *acl;
	AclItem    *items;
	bool		found = false;

	tuple = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(schema));
	if (!HeapTupleIsValid(tuple))
		return false;			/* dropped since the path was computed */
	form = (Form_pg_namespace) GETSTRUCT(tuple);
	if (!role_is_trusted(form->nspowner, caller, db_owner))
	{
		*creator = form->nspowner;
		*is_owner = true;
		found = true;
	}
	acl_datum = SysCacheGetAttr(NAMESPACEOID, tuple, Anum_pg_namespace_nspacl,
								&acl_null);
	acl = acl_null ? acldefault(OBJECT_SCHEMA, form->nspowner)
		: DatumGetAclP(acl_datum);
	items = ACL_DAT(acl);
	for (int i = 0; i < ACL_NUM(acl) && !found; i++)
	{
		if ((ACLITEM_GET_PRIVS(items[i]) & ACL_CREATE) != 0 &&
			!role_is_trusted(items[i].ai_grantee, caller, db_owner))
		{
			*creator = items[i].ai_grantee;
			*is_owner = false;
			found = true;
		}
	}
	ReleaseSysCache(tuple);
	return found;
}

static Oid
database_owner(void)
{
	HeapTuple	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
	owner = ((Form_pg_database) GETSTRUCT(tuple))->datdba;
	ReleaseSysCache(tuple);
	return owner;
}

pg_noreturn static void
refuse_search_path(const char *function, Oid schema, Oid creator, bool is_owner)
{
	const char *schema_name = quote_identifier(get_namespace_name(schema));
	const char *role_name = creator == ACL_ID_PUBLIC ? "PUBLIC"
		: quote_identifier(GetUserNameFromId(creator, false));

	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("%s refuses to run: role %s can create objects in schema %s",
					function, role_name, schema_name),
			 errdetail("Schema %s is on the search_path or holds caio; a function that %s planted there could be chosen instead of caio's for a call with untyped arguments, and run with your privileges.",
					   schema_name, creator == ACL_ID_PUBLIC ? "any role" : role_name),
			 is_owner ?
			 errhint("Take %s off the search_path: call caio with a search_path of schemas that only you, a superuser or the database owner can create in.",
					 schema_name) :
			 errhint("Revoke it (REVOKE CREATE ON SCHEMA %s FROM %s), or call caio with a search_path of schemas that only you, a superuser or the database owner can create in.",
					 schema_name, role_name)));
}

static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	CacheRegisterSyscacheCallback(NAMESPACEOID, forget_trusted_path, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHOID, forget_trusted_path, (Datum) 0);
	CacheRegisterSyscacheCallback(DATABASEOID, forget_trusted_path, (Datum) 0);
	callbacks_registered = true;
}

void
caio_require_trusted_search_path(const char *function)
{
	Oid			caller = GetUserId();
	const CaioCatalog *catalog = caio_catalog();
	List	   *path;
	Oid			db_owner;
	ListCell   *cell;
	MemoryContext old_context;

	/* A call qualified with caio's schema is as capturable as one through it. */
	path = list_append_unique_oid(fetch_search_path(false), catalog->schema);
	if (OidIsValid(trusted_role) && trusted_role == caller &&
		equal(path, trusted_path))
	{
		list_free(path);
		return;
	}
	register_callbacks();
	db_owner = database_owner();
	foreach(cell, path)
	{
		Oid			schema = lfirst_oid(cell);
		Oid			creator;
		bool		is_owner;

		/* A temporary schema is the session's own (or not usable by it). */
		if (!isAnyTempNamespace(schema) &&
			untrusted_creator(schema, caller, db_owner, &creator, &is_owner))
			refuse_search_path(function, schema, creator, is_owner);
	}
	old_context = MemoryContextSwitchTo(TopMemoryContext);
	list_free(trusted_path);
	trusted_path = list_copy(path);
	MemoryContextSwitchTo(old_context);
	trusted_role = caller;
	list_free(path);
}

/*
 * The calls any role makes (leases, nonces, claims) are checked when a
 * superuser makes them: a capture of those is an escalation, while an
 * application role's is PostgreSQL's own secure-schema rule to keep
 * (doc/privileges.md).
 */
void
caio_require_trusted_search_path_for_superuser(const char *function)
{
	if (superuser())
		caio_require_trusted_search_path(function);
}
