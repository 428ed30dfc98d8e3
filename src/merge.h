/*
 * merge.h
 *		Whether an UPDATE sets a column, also when a MERGE action runs it.
 */
#ifndef CAIO_MERGE_H
#define CAIO_MERGE_H

#include "commands/trigger.h"

/* What the UPDATE whose row fires a trigger does with one column. */
typedef enum CaioColumnWrite
{
	CAIO_COLUMN_KEPT,			/* it does not set the column */
	CAIO_COLUMN_SET,			/* it sets it */
	CAIO_COLUMN_UNKNOWN,		/* a MERGE action, of a MERGE whose UPDATE
								 * actions differ on the column, and
								 * PostgreSQL (before 17) does not say which
								 * action runs */
	CAIO_COLUMN_UNSEEN			/* of a statement that started before the
								 * backend loaded caio, and that caio cannot
								 * establish (EXPLAIN ANALYZE, a function's
								 * statement, a MERGE) */
} CaioColumnWrite;

extern void caio_merge_init(void);
extern CaioColumnWrite caio_update_sets(const TriggerData *td, int attnum);

#endif							/* CAIO_MERGE_H */
