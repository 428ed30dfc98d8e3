/*
 * resource_lock.h
 *		Locks on 64-bit keys in the lock manager, and waking those who wait
 *		for one.
 */
#ifndef CAIO_RESOURCE_LOCK_H
#define CAIO_RESOURCE_LOCK_H

#include "storage/lockdefs.h"

extern void caio_resource_lock_init(void);
extern uint64 caio_lock_key(uint64 space, const char *name);
extern uint64 caio_resource_key(const char *resource);
extern bool caio_resource_trylock(uint64 key);
extern void caio_resource_lock(uint64 key, LOCKMODE mode);
extern void caio_resource_unlock(uint64 key, LOCKMODE mode);
extern void caio_tag_lock(uint64 key, uint16 kind, LOCKMODE mode);
extern void caio_tag_unlock(uint64 key, uint16 kind, LOCKMODE mode);

/* Tag spaces of caio_tag_lock; resource_lock.c keeps 17217 to 17219. */
#define CAIO_TAG_WALLET			17220	/* nonce reservation on one wallet */
#define CAIO_TAG_TOKEN_MOVE		17221	/* the token sequence's start-up move */
extern void caio_waiter_enter(uint64 key);
extern void caio_waiter_leave(uint64 key);
extern void caio_wake_all_waiters_at_end(void);

#endif							/* CAIO_RESOURCE_LOCK_H */
