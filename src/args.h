/*
 * args.h
 *		Checks of the arguments that SQL-callable functions share: names,
 *		ttl, wait, and the expiry a ttl gives.
 */
#ifndef CAIO_ARGS_H
#define CAIO_ARGS_H

#include "fmgr.h"
#include "datatype/timestamp.h"

extern void caio_arg_required(FunctionCallInfo fcinfo, int argno,
							  const char *what, const char *hint);
extern char *caio_arg_name(FunctionCallInfo fcinfo, int argno, const char *what);
extern void caio_check_name(const char *value, const char *what);
extern Interval *caio_arg_ttl(FunctionCallInfo fcinfo, int argno);
extern int64 caio_arg_wait_usecs(FunctionCallInfo fcinfo, int argno);
extern void caio_check_finite(const Interval *span, const char *what);
extern bool caio_expiry_within_limit(TimestampTz now, TimestampTz expires_at);
extern TimestampTz caio_expiry(TimestampTz now, Interval *ttl);
extern TimestampTz caio_ago(TimestampTz now, Interval *span, const char *what);

#endif							/* CAIO_ARGS_H */
