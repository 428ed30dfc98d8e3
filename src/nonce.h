/*
 * nonce.h
 *		EVM nonce reservation.
 */
#ifndef CAIO_NONCE_H
#define CAIO_NONCE_H

extern void caio_nonce_init(void);

#endif							/* CAIO_NONCE_H */
