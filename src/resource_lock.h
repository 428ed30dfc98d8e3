/*
 * resource_lock.h
 *		Locks on 64-bit keys in the lock manager, and waking those who wait
 *		for one.
 */
#ifndef CAIO_RESOURCE_LOCK_H
#define CAIO_RESOURCE_LOCK_H

#include "storage/lockdefs.h"

extern void caio_resource_lock_init(void);
extern uint64 caio_resource_key(const char *resource);
extern bool caio_resource_trylock(uint64 key);
extern void caio_resource_lock(uint64 key, LOCKMODE mode);
extern void caio_resource_unlock(uint64 key, LOCKMODE mode);
extern void caio_wallet_lock(int64 chain_id, const char *address, LOCKMODE mode);
extern void caio_waiter_enter(uint64 key);
extern void caio_waiter_leave(uint64 key);
extern void caio_wake_all_waiters_at_end(void);

#endif							/* CAIO_RESOURCE_LOCK_H */
