/*
 * token.h
 *		Fencing tokens: epoch << CAIO_TOKEN_EPOCH_SHIFT | n, never repeated.
 */
#ifndef CAIO_TOKEN_H
#define CAIO_TOKEN_H

#define CAIO_TOKEN_EPOCH_SHIFT	47

extern int64 caio_token_next(void);
extern void caio_token_next_n(int64 *tokens, int n);

#endif							/* CAIO_TOKEN_H */
