/*
 * citus.h
 *		caio on a Citus cluster: where caio's state lives, and the tables
 *		whose rows caio could not fence.
 */
#ifndef CAIO_CITUS_H
#define CAIO_CITUS_H

#include "postgres.h"

extern void caio_citus_serve_here(const char *what);
extern void caio_citus_refuse_table(Oid relid, const char *installer);

#endif							/* CAIO_CITUS_H */
