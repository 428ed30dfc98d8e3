"""Leases: LockManager (acquire, renew, release, and the kept lease of
``with locks.lease(...)``) and TestClock."""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Callable, List, Optional, Protocol, Sequence, Tuple, Type, Union

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import tuple_row

from ._errors import CaioError, translating_errors

#: A duration: a :class:`datetime.timedelta`, or a number of seconds.
Duration = Union[timedelta, int, float]

Connect = Callable[[], "psycopg.Connection[Any]"]

#: The lease as an argument: resource, holder and token; caio ignores the
#: times in it.
LEASE_ARGUMENT = "ROW(%s::text, %s::text, %s::bigint, NULL, NULL)::caio_lease"
_COLUMNS = "resource, holder, token, acquired_at, expires_at"


def interval(duration: Duration) -> timedelta:
    """A duration as a :class:`~datetime.timedelta` (a number is seconds)."""
    if isinstance(duration, timedelta):
        return duration
    if isinstance(duration, bool) or not isinstance(duration, (int, float)):
        raise TypeError(f"a duration is a timedelta or a number of seconds, not {duration!r}")
    return timedelta(seconds=duration)


class LeaseLike(Protocol):
    """What identifies a lease to caio: its resource, holder and token
    (a :class:`Lease` or the kept lease of ``with locks.lease(...)``)."""

    @property
    def resource(self) -> str: ...

    @property
    def holder(self) -> str: ...

    @property
    def token(self) -> int: ...


def lease_parameters(lease: LeaseLike) -> Tuple[str, str, int]:
    """The parameters of :data:`LEASE_ARGUMENT` for a lease."""
    return (lease.resource, lease.holder, lease.token)


@dataclass(frozen=True)
class Lease:
    """A lease as caio granted or renewed it.  ``token`` is the fencing
    token (a Python int: exact at any size); the times are the server's."""

    resource: str
    holder: str
    token: int
    acquired_at: datetime
    expires_at: datetime


class NotAcquiredError(Exception):
    """``locks.lease(...)`` could not acquire: another holder has a live
    lease on the resource (after waiting ``wait``, if given)."""

    def __init__(self, resource: str, holder: str) -> None:
        super().__init__(f"{holder!r} could not acquire {resource!r}: another holder has a live lease")
        self.resource = resource
        self.holder = holder


class LeaseLostError(Exception):
    """Raised by :meth:`KeptLease.raise_if_lost` once the kept lease can no
    longer be known to be held."""


def fetch_one(conn: "psycopg.Connection[Any]", query: str, params: Sequence[Any]) -> Any:
    """The first row of a query, as a tuple whatever the connection's row
    factory, with caio's refusals raised as CaioError."""
    with translating_errors(), conn.cursor(row_factory=tuple_row) as cursor:
        return cursor.execute(query, params).fetchone()


def _one(conn: "psycopg.Connection[Any]", query: str, params: Sequence[Any]) -> Any:
    """The first row of a caio call, committed at once unless the caller
    has a transaction open (then it is part of it, in a savepoint)."""
    if conn.autocommit:
        return fetch_one(conn, query, params)
    with conn.transaction():
        return fetch_one(conn, query, params)


def _lease(row: Any) -> Optional[Lease]:
    if row is None or row[2] is None:
        return None
    return Lease(row[0], row[1], row[2], row[3], row[4])


class LockManager:
    """Leases on the connection ``conn`` (psycopg 3).

    ``acquire``, ``renew`` and ``release`` run on ``conn`` and commit at
    once (in autocommit mode, or in a transaction of their own when none is
    open; inside an open transaction they become part of it).  A lease kept
    by :meth:`lease` is renewed on a connection of its own, opened with the
    parameters (and password) of ``conn``, or by ``connect()`` when given,
    and kept for the next kept lease; :meth:`close` closes them.  A kept
    lease whose block ends inside a transaction of ``conn`` is released in
    that transaction."""

    def __init__(self, conn: "psycopg.Connection[Any]", *, connect: Optional[Connect] = None) -> None:
        self.conn = conn
        self._connect = connect
        self._dsn = conn.info.dsn
        self._password = conn.info.password or None
        self._idle: List["psycopg.Connection[Any]"] = []
        self._idle_lock = threading.Lock()

    def acquire(self, resource: str, holder: str, ttl: Duration,
                wait: Optional[Duration] = None) -> Optional[Lease]:
        """A new lease (or the holder's own live one, extended), or None
        when another holder has a live lease after waiting ``wait``
        (default: try once)."""
        return _lease(_one(self.conn, f"SELECT {_COLUMNS} FROM caio_acquire(%s, %s, %s, %s)",
                           (resource, holder, interval(ttl), interval(wait or 0))))

    def renew(self, lease: LeaseLike, ttl: Duration) -> Optional[Lease]:
        """The lease extended to now + ttl (same token), or None when it
        is lost: expired, released or superseded."""
        return _lease(_one(self.conn, f"SELECT {_COLUMNS} FROM caio_renew({LEASE_ARGUMENT}, %s)",
                           (*lease_parameters(lease), interval(ttl))))

    def release(self, lease: LeaseLike) -> bool:
        """True when this released the lease, False when it was already
        lost.  Releasing twice is harmless."""
        row = _one(self.conn, f"SELECT caio_release({LEASE_ARGUMENT})", lease_parameters(lease))
        return bool(row[0])

    def lease_of(self, resource: str) -> Optional[Lease]:
        """The live lease of a resource, or None."""
        return _lease(_one(self.conn, f"SELECT {_COLUMNS} FROM caio_lease_of(%s)", (resource,)))

    def lease(self, resource: str, holder: str, ttl: Duration, wait: Optional[Duration] = None,
              *, renew_every: Optional[Duration] = None) -> "KeptLease":
        """A lease kept alive while a ``with`` block runs::

            with locks.lease("send:0xabc", "worker-a", 30) as lease:
                ...  # lease.token, lease.lost (a threading.Event)

        Acquires on entering (:class:`NotAcquiredError` when another
        holder keeps it), renews every ``renew_every`` (default a third of
        ``ttl``) on a connection of its own, sets ``lease.lost`` as soon as a
        renewal returns None or fails, or no renewal reached the server
        before the lease would expire, and releases on leaving, also on an
        exception.  When the block ends inside a transaction of the
        manager's connection, the release is part of that transaction: the
        lease ends when it commits, and expires by itself if it rolls
        back."""
        return KeptLease(self, resource, holder, interval(ttl), None if wait is None else interval(wait),
                         None if renew_every is None else interval(renew_every))

    # Connections for kept leases.
    def _take(self) -> "psycopg.Connection[Any]":
        with self._idle_lock:
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed and conn.info.transaction_status == TransactionStatus.IDLE:
                    return conn
                conn.close()
        if self._connect is not None:
            conn = self._connect()
        else:
            conn = psycopg.connect(self._dsn, password=self._password, application_name="caio keep-alive")
        conn.autocommit = True
        return conn

    def _give_back(self, conn: "psycopg.Connection[Any]") -> None:
        if conn.closed or conn.info.transaction_status != TransactionStatus.IDLE:
            conn.close()
            return
        with self._idle_lock:
            self._idle.append(conn)

    def close(self) -> None:
        """Closes the idle connections of kept leases (not ``conn``)."""
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __enter__(self) -> "LockManager":
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()


class _Threads:
    """Threads that renew kept leases, kept for the next renewal."""

    KEEP_IDLE = 16

    def __init__(self) -> None:
        self._idle: List["_Thread"] = []
        self._lock = threading.Lock()

    def run(self, task: Callable[[], None]) -> None:
        with self._lock:
            thread = self._idle.pop() if self._idle else None
        if thread is None:
            thread = _Thread(self)
            thread.give(task)
            thread.start()
        else:
            thread.give(task)

    def done(self, thread: "_Thread") -> bool:
        """Keeps the thread for another task; False when enough are idle."""
        with self._lock:
            if len(self._idle) >= self.KEEP_IDLE:
                return False
            self._idle.append(thread)
            return True


class _Thread(threading.Thread):
    def __init__(self, threads: _Threads) -> None:
        super().__init__(daemon=True, name="caio renewal")
        self._threads = threads
        self._task: Optional[Callable[[], None]] = None
        self._given = threading.Event()

    def give(self, task: Callable[[], None]) -> None:
        self._task = task
        self._given.set()

    def run(self) -> None:
        while True:
            self._given.wait()
            self._given.clear()
            task, self._task = self._task, None
            if task is not None:
                try:
                    task()
                except BaseException:  # the task records what went wrong itself
                    pass
            if not self._threads.done(self):
                return


class _Schedule:
    """One thread for every kept lease of the process: it sleeps until the
    next renewal is due and hands it to a thread of _THREADS (a renewal
    that hangs holds up no other), and it checks, when a lease would
    expire, that a renewal reached the server since.  A kept lease that
    ends before its first renewal costs no thread switch: its entries are
    dropped when the thread next wakes for a due one (a renewal period
    later), and a new entry wakes the thread only when it is due before
    what the thread sleeps until."""

    def __init__(self) -> None:
        self._heap: List[Tuple[float, int, "KeptLease", bool]] = []
        self._cond = threading.Condition()
        self._order = itertools.count()
        self._thread: Optional[threading.Thread] = None
        self._wake_at = float("inf")  # while the thread sleeps: when it wakes

    def add(self, due: float, kept: "KeptLease", expiry: bool = False) -> None:
        """At ``due``: renew ``kept``, or with ``expiry`` check that it was
        renewed since."""
        with self._cond:
            heapq.heappush(self._heap, (due, next(self._order), kept, expiry))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name="caio renewals")
                self._thread.start()
            elif due < self._wake_at:
                self._cond.notify()

    def _run(self) -> None:
        clean = True
        while True:
            with self._cond:
                while True:
                    if clean:  # drop the entries of leases that ended
                        while self._heap and self._heap[0][2]._stop.is_set():
                            heapq.heappop(self._heap)
                    now = time.monotonic()
                    if self._heap and self._heap[0][0] <= now:
                        break
                    self._wake_at = self._heap[0][0] if self._heap else float("inf")
                    clean = not self._cond.wait(self._wake_at - now if self._heap else None)
                self._wake_at = float("-inf")  # awake: no need to notify
                _, _, kept, expiry = heapq.heappop(self._heap)
                clean = True
            if kept._stop.is_set():
                continue
            if not expiry:
                _THREADS.run(kept._renew)
            elif kept._granted + kept.ttl.total_seconds() <= time.monotonic():
                kept._lose("no renewal reached the server before the lease would expire")


_THREADS = _Threads()
_SCHEDULE = _Schedule()


def _after_fork() -> None:
    # A child process has none of its parent's threads.
    global _THREADS, _SCHEDULE
    _THREADS, _SCHEDULE = _Threads(), _Schedule()


os.register_at_fork(after_in_child=_after_fork)


class KeptLease:
    """The lease of ``with locks.lease(...) as lease:``.  ``resource``,
    ``holder``, ``token``, ``acquired_at`` and ``expires_at`` are the
    lease's (the times as of its last renewal); ``lost`` is a
    :class:`threading.Event` set once the lease can no longer be known to
    be held, ``lost_reason`` says why.  Pass it wherever a lease goes (the
    nonce helpers, ``LockManager.renew``), and write under ``lease.token``:
    the table refuses the write (``FencingError``) if the lease was taken
    over, whether or not the client noticed yet."""

    __slots__ = ("_manager", "resource", "holder", "ttl", "_wait", "_every", "current", "lost",
                 "lost_reason", "released", "_conn", "_stop", "_granted", "_renewing")

    def __init__(self, manager: LockManager, resource: str, holder: str, ttl: timedelta,
                 wait: Optional[timedelta], every: Optional[timedelta]) -> None:
        self._manager = manager
        self.resource = resource
        self.holder = holder
        self.ttl = ttl
        self._wait = wait
        self._every = (every or ttl / 3).total_seconds()
        if not 0 < self._every < ttl.total_seconds():
            raise ValueError("renew_every must be positive and shorter than the ttl")
        self.current: Optional[Lease] = None
        self.lost = threading.Event()
        self.lost_reason: Optional[str] = None
        self.released: Optional[bool] = None
        self._conn: Optional["psycopg.Connection[Any]"] = None
        self._stop = threading.Event()
        self._granted = 0.0  # when the request that granted or last renewed it was sent
        self._renewing = threading.Lock()  # held while a renewal is on its way

    @property
    def token(self) -> int:
        return self._held().token

    @property
    def acquired_at(self) -> datetime:
        return self._held().acquired_at

    @property
    def expires_at(self) -> datetime:
        return self._held().expires_at

    @property
    def backend_pid(self) -> Optional[int]:
        """The server process of the lease's own connection, which renews
        it: None until it has one (from the first renewal on, or from the
        start when the manager's connection was busy)."""
        conn = self._conn
        return None if conn is None else conn.info.backend_pid

    def _held(self) -> Lease:
        if self.current is None:
            raise RuntimeError("the lease is not acquired yet: use it in a with block")
        return self.current

    def raise_if_lost(self) -> None:
        """Raises :class:`LeaseLostError` once ``lost`` is set."""
        if self.lost.is_set():
            raise LeaseLostError(f"the lease on {self.resource!r} (token {self.token}) was lost: "
                                 f"{self.lost_reason}")

    def _lose(self, reason: str) -> None:
        if not self.lost.is_set() and not self._stop.is_set():
            self.lost_reason = reason
            self.lost.set()

    def _granted_at(self, started: float) -> None:
        """A grant or renewal sent at ``started`` succeeded: the next renewal
        is due a renewal period later, and ``lost`` is set if none has
        succeeded by the time this one would expire."""
        self._granted = started
        _SCHEDULE.add(started + self._every, self)
        _SCHEDULE.add(started + self.ttl.total_seconds(), self, expiry=True)

    def _main_free(self) -> bool:
        """Whether the manager's connection can take a statement that commits
        at once (autocommit, no transaction open)."""
        conn = self._manager.conn
        return bool(conn.autocommit and not conn.closed
                    and conn.info.transaction_status == TransactionStatus.IDLE)

    def __enter__(self) -> "KeptLease":
        # On the manager's connection when it is free: a block that ends
        # before the first renewal then needs no other connection.
        on_main = self._main_free()
        conn = self._manager.conn if on_main else self._manager._take()
        try:
            started = time.monotonic()
            row = fetch_one(conn, f"SELECT {_COLUMNS} FROM caio_acquire(%s, %s, %s, %s)",
                            (self.resource, self.holder, self.ttl, self._wait or timedelta(0)))
        except BaseException:
            if not on_main:
                conn.close()
            raise
        self.current = _lease(row)
        if self.current is None:
            if not on_main:
                self._manager._give_back(conn)
            raise NotAcquiredError(self.resource, self.holder)
        if not on_main:
            self._conn = conn
        self._granted_at(started)
        return self

    def _renew(self) -> None:
        """One renewal, on a thread of _THREADS, on the lease's own
        connection (taken at the first renewal); schedules the next."""
        with self._renewing:
            if self._stop.is_set():
                return
            current = self._held()
            started = time.monotonic()
            try:
                if self._conn is None:
                    self._conn = self._manager._take()
                row = fetch_one(self._conn, f"SELECT {_COLUMNS} FROM caio_renew({LEASE_ARGUMENT}, %s)",
                                (*lease_parameters(current), self.ttl))
            except Exception as error:
                self._lose(f"a renewal failed: {error}")
                return
        renewed = _lease(row)
        if renewed is None:
            self._lose("the renewal returned NULL: the lease expired, was released or taken over")
            return
        self.current = renewed
        self._granted_at(started)

    def __exit__(self, kind: Optional[Type[BaseException]], value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self._stop.set()
        # Once stop is set no renewal starts; wait for one on its way, but not
        # for one stuck on a connection that no longer answers: after a ttl,
        # leave that connection to its thread.
        own: Optional["psycopg.Connection[Any]"] = None
        if self._renewing.acquire(timeout=self.ttl.total_seconds()):
            self._renewing.release()
            own = self._conn
        self._conn = None
        self.released = self._release(own)

    def _release(self, own: Optional["psycopg.Connection[Any]"]) -> bool:
        """Releases the lease where the release cannot wait for the block's
        own transaction.  A write under the lease in a transaction open on
        the manager's connection holds caio's lock on the resource until that
        transaction ends, so a release from any other connection would queue
        behind a transaction that cannot end before the block does.  An open
        transaction therefore gets the release (in a savepoint): the lease
        ends when the work done under it commits, and stays until it expires
        if it rolls back.  A failed transaction holds no lock any more (the
        server aborted it at the error), so the release goes elsewhere
        then, as it does when no transaction is open.  Gives ``own`` back to
        the manager."""
        main = self._manager.conn
        status = TransactionStatus.UNKNOWN if main.closed else main.info.transaction_status
        try:
            if status == TransactionStatus.INTRANS:
                with main.transaction():
                    return self._release_on(main)
            if self._main_free():
                return self._release_on(main, bounded=True)
            if own is None:
                own = self._manager._take()
            return self._release_on(own, bounded=True)
        except (psycopg.Error, CaioError):
            # The connection went away, or the release failed in the caller's
            # transaction (its savepoint undid it): the lease expires by
            # itself, and the storage refuses writes under it once another
            # holder takes it.
            return False
        finally:
            if own is not None:
                self._manager._give_back(own)

    def _release_on(self, conn: "psycopg.Connection[Any]", bounded: bool = False) -> bool:
        """The release on ``conn``; ``bounded``, it waits for caio's lock no
        longer than the lease has left by the client's clock (then it has
        expired anyway): a transaction of another connection that wrote
        under the lease may stay open until the block ends.  Not in the
        caller's transaction, whose lock_timeout it would change."""
        if not bounded:
            row = fetch_one(conn, f"SELECT caio_release({LEASE_ARGUMENT})", lease_parameters(self._held()))
            return bool(row[0])
        left = max(self._granted + self.ttl.total_seconds() - time.monotonic(), 0.1)
        row = fetch_one(conn, f"SELECT caio_release({LEASE_ARGUMENT})"
                        " FROM (SELECT pg_catalog.set_config('lock_timeout', %s, true)) AS bound",
                        (*lease_parameters(self._held()), f"{int(left * 1000)}ms"))
        return bool(row[0])


class TestClock:
    """caio's test clock (``caio_clock_set``, ``caio_clock_advance``,
    ``caio_clock_reset``) on ``conn``: it moves the time every caio function
    of the database reads, for every session at once.  Superusers, or a
    role granted it."""

    __test__ = False  # not a test case, for test runners that collect Test* classes

    def __init__(self, conn: "psycopg.Connection[Any]") -> None:
        self.conn = conn

    def set(self, at: datetime) -> datetime:
        """Freezes caio's clock at ``at``; returns it."""
        row = _one(self.conn, "SELECT caio_clock_set(%s)", (at,))
        return row[0]  # type: ignore[no-any-return]

    def advance(self, step: Duration) -> datetime:
        """Moves caio's clock forward by ``step`` (a running clock is first
        frozen at the server's time); returns the new reading."""
        row = _one(self.conn, "SELECT caio_clock_advance(%s)", (interval(step),))
        return row[0]  # type: ignore[no-any-return]

    def reset(self) -> datetime:
        """Puts caio back on the server's clock; returns the server's time."""
        row = _one(self.conn, "SELECT caio_clock_reset()", ())
        return row[0]  # type: ignore[no-any-return]
