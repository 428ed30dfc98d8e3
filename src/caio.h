/*
 * caio.h
 *		What every caio source file shares: its SQLSTATEs, the limits the
 *		contract puts on arguments, and the version shims (compat.h).  Each
 *		concept's API is in a header of its own (catalog.h, args.h, guard.h,
 *		lease.h, refusal.h, ...).
 */
#ifndef CAIO_H
#define CAIO_H

#include "compat.h"

/* caio's own SQLSTATEs (class LK: "lease"), defined once. */
#define ERRCODE_CAIO_FENCING			MAKE_SQLSTATE('L','K','0','0','1')
#define ERRCODE_CAIO_VERSION_CONFLICT	MAKE_SQLSTATE('L','K','0','0','2')
#define ERRCODE_CAIO_FENCING_MISSING	MAKE_SQLSTATE('L','K','0','0','3')
/* A lease, token or nonce call on a node where caio's state does not live. */
#define ERRCODE_CAIO_NOT_HERE			MAKE_SQLSTATE('L','K','0','0','4')

/* Limits that the contract puts on arguments. */
#define CAIO_NAME_MAX_BYTES		255
#define CAIO_TTL_MAX_DAYS		366
#define CAIO_WAIT_MAX_DAYS		1

#endif							/* CAIO_H */
