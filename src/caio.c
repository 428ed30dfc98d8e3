/*
 * caio.c
 *		Module set-up: the magic block, and _PG_init, which hands each part of
 *		caio its own set-up.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "caio.h"
#include "catalog.h"
#include "fencing.h"
#include "merge.h"
#include "nonce.h"
#include "refusal.h"
#include "resource_lock.h"
#include "shared.h"

CAIO_MODULE_MAGIC;

/* fmgr.h declares it from PostgreSQL 16 on. */
#if PG_VERSION_NUM < 160000
void		_PG_init(void);
#endif

void
_PG_init(void)
{
	caio_catalog_init();
	caio_resource_lock_init();
	caio_fencing_init();
	caio_merge_init();
	caio_nonce_init();
	caio_refusal_init();
	caio_shared_init();
	MarkGUCPrefixReserved("caio");
}
