/*
 * clock.h
 *		The time every caio function reads: the server's, or the test clock.
 */
#ifndef CAIO_CLOCK_H
#define CAIO_CLOCK_H

#include "datatype/timestamp.h"

extern TimestampTz caio_clock_now(bool *frozen);
extern void caio_clock_forget(void);

#endif							/* CAIO_CLOCK_H */
