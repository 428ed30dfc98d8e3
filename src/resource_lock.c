/*
 * resource_lock.c
 *		Per-resource locks that serialise caio's writers, and the wake-up of
 *		sessions that wait for a resource.
 *
 * Everything that changes a resource's lease, and every fenced write, first
 * takes a transaction-scoped lock on a hash of the resource name in the
 * ordinary lock manager.  Granting a new lease (caio_acquire) and releasing
 * one take it in ExclusiveLock mode; renewing a lease and writing under one
 * share it (ShareLock).  So a transaction that wrote under a token keeps the
 * resource from being taken over or released until it ends, while renewals
 * from a heartbeat connection never wait for the holder's writes.
 * caio_acquire takes its lock conditionally, so it never queues behind
 * another transaction; the others queue, so that a renew or a write racing a
 * takeover learns the takeover's outcome instead of failing early.
 *
 * A session that waits for a resource does not poll.  It holds a share lock
 * on a second tag for the resource (and one for "any resource"), and sleeps
 * on its latch.  Whoever changes the resource wakes the holders of that tag
 * once its own locks are gone (at commit or abort, or at once when it lets the
 * lock go early), using the lock manager's list of conflicting holders.  No
 * shared memory of our own is needed, so none of this requires preloading;
 * with caio preloaded, waiters also count themselves in shared memory, so
 * that a committer learns that nobody waits without a look at the lock table.
 *
 * The tags live in the advisory lock space with field4 values that
 * pg_advisory_lock() never uses, so they show in pg_locks as "advisory" with
 * objsubid 17217 (resource), 17218 (waiter), 17219 (any-resource waiter),
 * 17220 (an EVM wallet's nonces) and 17221 (the token sequence's start-up
 * move, held only while it is made).
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "caio.h"
#include "catalog.h"
#include "resource_lock.h"
#include "shared.h"

#define CAIO_TAG_RESOURCE		17217	/* 0x4341, "CA" */
#define CAIO_TAG_WAITER			17218
#define CAIO_TAG_ANY_WAITER		17219

/* Resources whose lock this transaction took, whose waiters we wake at end. */
static uint64 *touched_keys = NULL;
static int	touched_count = 0;
static int	touched_size = 0;
static bool wake_everyone = false;

static MemoryContext wake_context = NULL;

/*
 * Whether this session is counted in caio_shared_waiters(), and the
 * (sub)transaction nest level of the wait that counted it.
 */
static bool counted_as_waiter = false;
static int	counted_at_level = 0;

static void
set_tag(LOCKTAG *tag, uint64 key, uint16 kind)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (key >> 32),
						 (uint32) key, kind);
}

/*
 * Lock keys are SipHash-2-4 of the name under a secret of the database's
 * (caio_lock_key, made by CREATE EXTENSION, read by the owner alone).  With
 * a hash anyone can compute, a role could find a name whose key is another
 * role's resource's, lease that name, and keep the other's lock in a
 * transaction it holds open: the holder's renewals and writes would wait,
 * and no takeover could be granted.  A schema from before 0.6.0 has no
 * secret until ALTER EXTENSION caio UPDATE; its keys stay the unkeyed hash
 * that every session uses with that schema.
 *
 * Every session must use the same secret, also while it is rotated.  A
 * transaction that makes a key holds caio_lock_key in AccessShareLock until
 * it ends, and the table's trigger (caio_lock_key_trigger) takes it in
 * AccessExclusiveLock before any change: so a rotation waits for every
 * transaction that holds a lock under the old secret, and holds back new
 * ones until it commits.  Its relcache invalidation then reaches each
 * session before that session's next key (taking the table's lock anew in a
 * transaction accepts invalidations), and the session reads the secret again.
 */
typedef struct LockSecret
{
	bool		loaded;
	Oid			table;			/* the caio_lock_key it was read from */
	uint64		k0;
	uint64		k1;
} LockSecret;

static LockSecret lock_secret = {false, InvalidOid, 0, 0};

static CaioPlan lock_secret_read = CAIO_PLAN_NO_ARGS(
	"SELECT key FROM @extschema@.caio_lock_key");

#define CAIO_LOCK_SECRET_LEN 16

/* How to make a new secret; safe while caio is in use (see above). */
#define CAIO_LOCK_KEY_ROTATION \
	"As the extension owner, in one transaction: DELETE FROM caio_lock_key; INSERT INTO caio_lock_key (key) VALUES (uuid_send(gen_random_uuid())); it waits for the transactions that use caio's locks, and every session uses the new key from its next transaction."

PG_FUNCTION_INFO_V1(caio_lock_key_trigger);

/*
 * The row trigger on caio_lock_key, enabled for replicas only: a row that
 * logical replication brings (its workers run with session_replication_role
 * = replica) is another database's secret, and is skipped: a subscriber's
 * initial copy would otherwise fail on caio_lock_key_pkey for ever, and
 * later changes replace the subscriber's own secret.  Enabled otherwise
 * (by hand), it lets the write through.
 */
static Datum
lock_key_row(TriggerData *td)
{
	if (SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA ||
		!TRIGGER_FIRED_BEFORE(td->tg_event))
		return PointerGetDatum(NULL);
	return PointerGetDatum(TRIGGER_FIRED_BY_UPDATE(td->tg_event)
						   ? td->tg_newtuple : td->tg_trigtuple);
}

/*
 * The statement trigger on caio_lock_key: before the secret changes, wait
 * for every transaction that made a lock key with it, and tell every session
 * to read it again.  Also its row trigger (lock_key_row).
 */
Datum
caio_lock_key_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Oid			relid;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		RelationGetRelid(td->tg_relation) != caio_catalog()->lock_key)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s() runs only as caio's triggers on caio_lock_key",
						get_func_name(fcinfo->flinfo->fn_oid))));
	if (TRIGGER_FIRED_FOR_ROW(td->tg_event))
		return lock_key_row(td);
	relid = RelationGetRelid(td->tg_relation);
	LockRelationOid(relid, AccessExclusiveLock);
	CacheInvalidateRelcacheByRelid(relid);
	return PointerGetDatum(NULL);
}

static uint64
bytes_le64(const unsigned char *p)
{
	uint64		v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* A rotation of the secret (or any change of its table) drops the cached one. */
static void
lock_secret_invalidate(Datum arg pg_attribute_unused(), Oid relid)
{
	if (relid == InvalidOid || relid == lock_secret.table)
		lock_secret.loaded = false;
}

/*
 * Read once per session, and again after a rotation or after the extension
 * changed.  The table's lock, held to the end of the transaction, keeps a
 * rotation from committing while this transaction uses the secret.
 */
static const LockSecret *
lock_secret_get(void)
{
	const CaioCatalog *cat = caio_catalog();
	CaioSpi		spi;
	bool		isnull = true;
	bytea	   *key = NULL;

	if (OidIsValid(cat->lock_key))
	{
		LockRelationOid(cat->lock_key, AccessShareLock);
		cat = caio_catalog();
	}
	if (lock_secret.loaded && lock_secret.table == cat->lock_key)
		return &lock_secret;
	lock_secret.loaded = false;
	if (OidIsValid(cat->lock_key))
	{
		caio_spi_begin(&spi);
		if (caio_spi_run(&lock_secret_read, NULL, NULL, true) == 1)
		{
			Datum		value = caio_spi_value(0, 1, &isnull);

			if (!isnull)
				key = DatumGetByteaPP(value);
		}
		if (key == NULL || VARSIZE_ANY_EXHDR(key) != CAIO_LOCK_SECRET_LEN)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("caio's lock key is missing or damaged"),
					 errdetail("caio_lock_key must hold one row of 16 random bytes, from which caio derives the keys of its resource locks."),
					 errhint("%s", CAIO_LOCK_KEY_ROTATION)));
		lock_secret.k0 = bytes_le64((const unsigned char *) VARDATA_ANY(key));
		lock_secret.k1 = bytes_le64((const unsigned char *) VARDATA_ANY(key) + 8);
		caio_spi_end(&spi);
	}
	lock_secret.table = cat->lock_key;
	lock_secret.loaded = true;
	return &lock_secret;
}

static inline uint64
rotl64(uint64 x, int bits)
{
	return (x << bits) | (x >> (64 - bits));
}

static inline void
sip_round(uint64 *v)
{
	v[0] += v[1];
	v[1] = rotl64(v[1], 13) ^ v[0];
	v[0] = rotl64(v[0], 32);
	v[2] += v[3];
	v[3] = rotl64(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl64(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl64(v[1], 17) ^ v[2];
	v[2] = rotl64(v[2], 32);
}

static inline void
sip_block(uint64 *v, uint64 m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012) under (k0, k1) of a message:
 * the eight bytes of first, little-endian, then len bytes of data.
 */
static uint64
lock_siphash(uint64 k0, uint64 k1, uint64 first, const unsigned char *data, size_t len)
{
	uint64		v[4] = {k0 ^ UINT64CONST(0x736f6d6570736575),
		k1 ^ UINT64CONST(0x646f72616e646f6d),
		k0 ^ UINT64CONST(0x6c7967656e657261),
	k1 ^ UINT64CONST(0x7465646279746573)};
	uint64		last = ((uint64) (len + 8)) << 56;
	size_t		whole = len - len % 8;

	sip_block(v, first);
	for (size_t at = 0; at < whole; at += 8)
		sip_block(v, bytes_le64(data + at));
	for (size_t i = 0; i < len % 8; i++)
		last |= ((uint64) data[whole + i]) << (8 * i);
	sip_block(v, last);
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/*
 * The key of a lock on (space, name): space keeps apart names of different
 * kinds (0 for resources, a chain ID for wallets).
 */
uint64
caio_lock_key(uint64 space, const char *name)
{
	const LockSecret *secret = lock_secret_get();
	size_t		len = strlen(name);

	if (!OidIsValid(secret->table))
		return hash_bytes_extended((const unsigned char *) name, (int) len, space);
	return lock_siphash(secret->k0, secret->k1, space,
						(const unsigned char *) name, len);
}

uint64
caio_resource_key(const char *resource)
{
	return caio_lock_key(0, resource);
}

static void
remember_touched(uint64 key)
{
	for (int i = 0; i < touched_count; i++)
		if (touched_keys[i] == key)
			return;
	if (touched_count == touched_size)
	{
		int			size = Max(16, touched_size * 2);

		touched_keys = touched_keys == NULL
			? MemoryContextAlloc(TopMemoryContext, size * sizeof(uint64))
			: repalloc(touched_keys, size * sizeof(uint64));
		touched_size = size;
	}
	touched_keys[touched_count++] = key;
}

bool
caio_resource_trylock(uint64 key)
{
	LOCKTAG		tag;

	set_tag(&tag, key, CAIO_TAG_RESOURCE);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		return false;
	remember_touched(key);
	return true;
}

void
caio_resource_lock(uint64 key, LOCKMODE mode)
{
	LOCKTAG		tag;

	set_tag(&tag, key, CAIO_TAG_RESOURCE);
	(void) LockAcquire(&tag, mode, false, false);
	remember_touched(key);
}

/*
 * A transaction-scoped lock on a key in a tag space of its own (kind), for
 * the other files' locks that are no resource's (an EVM wallet's nonces).
 */
void
caio_tag_lock(uint64 key, uint16 kind, LOCKMODE mode)
{
	LOCKTAG		tag;

	set_tag(&tag, key, kind);
	(void) LockAcquire(&tag, mode, false, false);
}

/* Let a caio_tag_lock go before the transaction ends. */
void
caio_tag_unlock(uint64 key, uint16 kind, LOCKMODE mode)
{
	LOCKTAG		tag;

	set_tag(&tag, key, kind);
	(void) LockRelease(&tag, mode, false);
}

/*
 * Set the latch of every session holding a (waiter) lock on this tag;
 * returns how many hold it.
 */
static int
wake_holders(const LOCKTAG *tag)
{
	MemoryContext old = MemoryContextSwitchTo(wake_context);
	int			count;
	VirtualTransactionId *holders = GetLockConflicts(tag, ExclusiveLock, &count);

	for (int i = 0; i < count; i++)
	{
		PGPROC	   *proc = CAIO_PROC_OF_VXID(holders[i]);

		if (proc != NULL)
			SetLatch(&proc->procLatch);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(wake_context);
	return count;
}

/*
 * Count this session among the waiters in shared memory, or no longer; a
 * no-op without it.  A session counts itself before its second look at the
 * resource, and the atomic add is a full barrier, so that look comes after.
 * A committer reads the count after its locks are gone: either it sees this
 * waiter, or it let go of its locks before the look.  Whatever it changed
 * was visible before its locks went (its commit in the proc array and the
 * clog, its invalidations sent), and the look reads with a fresh snapshot
 * after taking invalidations, so the look sees the change.
 */
static void
count_as_waiter(bool waiting)
{
	pg_atomic_uint32 *waiters = caio_shared_waiters();

	if (waiters == NULL || waiting == counted_as_waiter)
		return;
	if (waiting)
		pg_atomic_fetch_add_u32(waiters, 1);
	else
		pg_atomic_fetch_sub_u32(waiters, 1);
	counted_as_waiter = waiting;
	counted_at_level = GetCurrentTransactionNestLevel();
}

/*
 * Whether any session waits for any resource: the count in shared memory, or
 * without it the holders of the tag that every waiter holds.
 */
static bool
anyone_waiting(void)
{
	pg_atomic_uint32 *waiters = caio_shared_waiters();
	MemoryContext old;
	LOCKTAG		tag;
	int			count;

	if (waiters != NULL)
	{
		/* Read after this transaction's locks were let go, not before. */
		pg_memory_barrier();
		return pg_atomic_read_u32(waiters) > 0;
	}
	old = MemoryContextSwitchTo(wake_context);

	set_tag(&tag, 0, CAIO_TAG_ANY_WAITER);
	(void) GetLockConflicts(&tag, ExclusiveLock, &count);
	MemoryContextSwitchTo(old);
	MemoryContextReset(wake_context);
	return count > 0;
}

static void
wake_waiters(uint64 key)
{
	LOCKTAG		tag;

	set_tag(&tag, key, CAIO_TAG_WAITER);
	(void) wake_holders(&tag);
}

/*
 * Let go of a lock taken in this transaction that turned out not to be needed
 * (nothing was changed under it).  Someone may have found it taken meanwhile.
 */
void
caio_resource_unlock(uint64 key, LOCKMODE mode)
{
	LOCKTAG		tag;

	set_tag(&tag, key, CAIO_TAG_RESOURCE);
	LockRelease(&tag, mode, false);
	wake_waiters(key);
}

void
caio_waiter_enter(uint64 key)
{
	LOCKTAG		tag;

	/* Share locks on waiter tags never conflict: nobody takes them stronger. */
	set_tag(&tag, key, CAIO_TAG_WAITER);
	(void) LockAcquire(&tag, ShareLock, false, false);
	set_tag(&tag, 0, CAIO_TAG_ANY_WAITER);
	(void) LockAcquire(&tag, ShareLock, false, false);
	count_as_waiter(true);
}

void
caio_waiter_leave(uint64 key)
{
	LOCKTAG		tag;

	count_as_waiter(false);
	set_tag(&tag, key, CAIO_TAG_WAITER);
	LockRelease(&tag, ShareLock, false);
	set_tag(&tag, 0, CAIO_TAG_ANY_WAITER);
	LockRelease(&tag, ShareLock, false);
}

void
caio_wake_all_waiters_at_end(void)
{
	wake_everyone = true;
}

/*
 * After a transaction's (or an aborted subtransaction's) locks are released,
 * wake whoever waits for the resources it touched.  A sub-commit hands its
 * locks to the parent, so there is nothing to do yet.  Waking too often is
 * harmless: a waiter that finds nothing changed sleeps again.
 */
static void
caio_release_callback(ResourceReleasePhase phase, bool isCommit,
					  bool isTopLevel, void *arg pg_attribute_unused())
{
	if (phase != RESOURCE_RELEASE_AFTER_LOCKS || (isCommit && !isTopLevel))
		return;
	/*
	 * An error that ended a wait aborts the (sub)transaction the wait ran
	 * in, which lets its waiter locks go: the count goes with them.  A
	 * subtransaction begun and aborted inside a wait is no such error.
	 */
	if (!isCommit && counted_as_waiter &&
		GetCurrentTransactionNestLevel() <= counted_at_level)
		count_as_waiter(false);

	/* One look, at the count or the lock table, in the common case: nobody waits. */
	if ((touched_count > 0 || wake_everyone) && anyone_waiting())
	{
		LOCKTAG		tag;

		for (int i = 0; i < touched_count; i++)
			wake_waiters(touched_keys[i]);
		set_tag(&tag, 0, CAIO_TAG_ANY_WAITER);
		if (wake_everyone)
			(void) wake_holders(&tag);
	}

	if (isTopLevel)
	{
		touched_count = 0;
		wake_everyone = false;
	}
}

void
caio_resource_lock_init(void)
{
	wake_context = AllocSetContextCreate(TopMemoryContext, "caio wake-ups",
										 ALLOCSET_SMALL_SIZES);
	RegisterResourceReleaseCallback(caio_release_callback, NULL);
	CacheRegisterRelcacheCallback(lock_secret_invalidate, (Datum) 0);
}
