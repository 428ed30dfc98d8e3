/*
 * rows.h
 *		Writing caio's own tables without SPI, on the hot paths.
 */
#ifndef CAIO_ROWS_H
#define CAIO_ROWS_H

#include "access/skey.h"

/*
 * Edits a row's values in place (never a column that an index of the table
 * covers); returns false to leave the row as it is.  It may be called again,
 * on the row's newer version, when another transaction changed the row first.
 */
typedef bool (*CaioRowChange) (Datum *values, bool *isnull, void *arg);

extern bool caio_row_update(Oid heap_oid, Oid index_oid, ScanKey keys,
							int nkeys, int ncolumns, CaioRowChange change,
							void *arg);
extern void caio_row_insert(Oid heap_oid, int ncolumns, const Datum *values,
							const bool *isnull);

/* An insert in two steps: all preparation first, then only the write. */
typedef struct CaioRowWriter CaioRowWriter;

extern CaioRowWriter *caio_row_insert_begin(Oid heap_oid, int ncolumns);
extern void caio_row_insert_finish(CaioRowWriter *writer, const Datum *values,
								   const bool *isnull);
extern void caio_row_insert_cancel(CaioRowWriter *writer);

#endif							/* CAIO_ROWS_H */
