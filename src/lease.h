/*
 * lease.h
 *		Leases: a resource's row in caio_lease_state, read and checked.
 */
#ifndef CAIO_LEASE_H
#define CAIO_LEASE_H

#include "fmgr.h"
#include "datatype/timestamp.h"

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
extern bool caio_lease_is_current(const CaioLease *newest, int64 token,
								  const char *holder);
extern bool caio_lease_pin(const char *resource, CaioLease *newest);
extern void caio_lease_check_owner(const CaioLease *lease, Oid caller,
								   const char *action);
extern void caio_lease_require_holder(const CaioLease *lease);
extern void caio_lease_require_current(const CaioLease *lease, CaioLease *newest);

#endif							/* CAIO_LEASE_H */
