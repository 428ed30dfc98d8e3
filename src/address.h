/*
 * address.h
 *		EVM addresses (EIP-55), Keccak-256, and quoting bad input in errors.
 */
#ifndef CAIO_ADDRESS_H
#define CAIO_ADDRESS_H

#include "fmgr.h"

extern void caio_keccak256(const uint8 *data, size_t len, uint8 digest[32]);
extern char *caio_address_parse(const char *text);
extern char *caio_arg_address(FunctionCallInfo fcinfo, int argno);

/* Errors quote at most this much of a bad argument (an address is 42). */
#define CAIO_ECHO_MAX_BYTES		80
extern char *caio_echo(const char *text);

#endif							/* CAIO_ADDRESS_H */
