/*
 * fencing.h
 *		Protected tables, their trigger, and caio_use.
 */
#ifndef CAIO_FENCING_H
#define CAIO_FENCING_H

extern void caio_fencing_init(void);

#endif							/* CAIO_FENCING_H */
