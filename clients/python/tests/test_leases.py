"""Leases through the client: the lesson's story, the kept lease's
keep-alive, and how a lost lease is noticed."""

from __future__ import annotations

import os
import signal
import threading
import time
from datetime import timedelta

import psycopg
from psycopg.rows import dict_row

import caio
from support import DatabaseTest


def wait_for_own_connection(lease: caio.KeptLease) -> int:
    """The server process of the lease's own connection, once its first
    renewal has made one."""
    deadline = time.monotonic() + 5
    while lease.backend_pid is None:
        if time.monotonic() > deadline:
            raise AssertionError("no renewal in 5 s")
        time.sleep(0.02)
    return lease.backend_pid


class LeaseStory(DatabaseTest):
    database = "caio_python_story"

    def test_story(self) -> None:
        """The lesson's snippet in Python: tokens 1, None, 2, None."""
        locks, clock = caio.LockManager(self.conn), caio.TestClock(self.conn)
        a = locks.acquire("send:0xabc", "worker-a", 30)  # A holds the lease
        self.assertIsNotNone(a)
        assert a is not None
        self.assertEqual(a.token, 1)
        self.assertIsNone(locks.acquire("send:0xabc", "worker-b", 30))  # another holds it
        clock.advance(31)  # A pauses longer than its lease
        b = locks.acquire("send:0xabc", "worker-b", 30)  # B takes over
        assert b is not None
        self.assertEqual(b.token, 2)
        self.assertIsNone(locks.renew(a, 30))  # A's lease is lost
        self.assertFalse(locks.release(a))
        self.assertEqual(locks.lease_of("send:0xabc"), b)
        renewed = locks.renew(b, timedelta(minutes=1))
        assert renewed is not None
        self.assertEqual(renewed.token, 2)
        self.assertGreater(renewed.expires_at, b.expires_at)
        self.assertTrue(locks.release(b))
        self.assertFalse(locks.release(b))  # twice is harmless
        self.assertIsNone(locks.lease_of("send:0xabc"))


class Leases(DatabaseTest):
    database = "caio_python_leases"

    def test_same_holder_again_gets_same_token(self) -> None:
        first = self.locks.acquire("retry", "worker-a", 30)
        again = self.locks.acquire("retry", "worker-a", 30)
        assert first is not None and again is not None
        self.assertEqual(first.token, again.token)

    def test_wait(self) -> None:
        """acquire(..., wait=) wakes when the holder releases."""
        held = self.locks.acquire("wait", "worker-a", 30)
        assert held is not None
        other = caio.LockManager(self.connect())
        timer = threading.Timer(0.3, self.locks.release, (held,))
        timer.start()
        started = time.monotonic()
        got = other.acquire("wait", "worker-b", 30, wait=5)
        timer.join()
        self.assertIsNotNone(got)
        self.assertLess(time.monotonic() - started, 3)

    def test_outside_autocommit(self) -> None:
        """On a connection not in autocommit, acquire commits at once when no
        transaction is open, and joins (in a savepoint) one that is."""
        conn = self.connect()
        conn.autocommit = False
        locks = caio.LockManager(conn)
        a = locks.acquire("tx", "worker-a", 30)
        assert a is not None
        self.assertEqual(self.locks.lease_of("tx"), a)  # committed: seen elsewhere
        with conn.transaction():
            conn.execute("SELECT 1")
            b = locks.acquire("tx2", "worker-a", 30)
            self.assertIsNotNone(b)
            self.assertIsNone(self.locks.lease_of("tx2"))  # not yet
        self.assertIsNotNone(self.locks.lease_of("tx2"))

    def test_dict_rows(self) -> None:
        """A connection with another row factory works the same."""
        locks = caio.LockManager(self.connect(row_factory=dict_row))
        lease = locks.acquire("dict", "worker-a", 30)
        assert lease is not None
        self.assertIsInstance(lease.token, int)
        with locks.lease("dict2", "worker-a", 30) as kept:
            self.assertIsInstance(kept.token, int)


class KeptLeases(DatabaseTest):
    database = "caio_python_kept"

    def test_keep_alive(self) -> None:
        """A 1 s lease held for 3 s while the block runs: another holder is
        refused all along, and gets it once the block ends."""
        other = caio.LockManager(self.connect())
        with self.locks.lease("keep", "worker-a", 1) as lease:
            token = lease.token
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                self.assertIsNone(other.acquire("keep", "worker-b", 1))
                time.sleep(0.25)
            self.assertFalse(lease.lost.is_set(), lease.lost_reason)
            lease.raise_if_lost()
            self.assertEqual(lease.token, token)
        self.assertTrue(lease.released)
        self.assertIsNone(self.locks.lease_of("keep"))
        b = other.acquire("keep", "worker-b", 1)
        assert b is not None
        self.assertGreater(b.token, token)

    def test_released_on_exception(self) -> None:
        with self.assertRaises(ZeroDivisionError):
            with self.locks.lease("boom", "worker-a", 30) as lease:
                self.assertIsNotNone(self.locks.lease_of("boom"))
                1 / 0
        self.assertTrue(lease.released)
        self.assertIsNone(self.locks.lease_of("boom"))

    def test_not_acquired(self) -> None:
        held = self.locks.acquire("busy", "worker-a", 30)
        assert held is not None
        with self.assertRaises(caio.NotAcquiredError) as refused:
            with self.locks.lease("busy", "worker-b", 30):
                self.fail("the block ran without the lease")
        self.assertEqual(refused.exception.resource, "busy")
        # With wait, it gets the lease once the holder lets it go.
        threading.Timer(0.3, self.locks.release, (held,)).start()
        with caio.LockManager(self.connect()).lease("busy", "worker-b", 30, wait=5) as lease:
            self.assertGreater(lease.token, held.token)

    def test_connections(self) -> None:
        """A block shorter than a renewal period runs on the manager's
        connection alone; the renewals get a connection of their own, which
        serves the next kept lease."""
        before = self.value("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        with self.locks.lease("short", "worker-a", 30) as short:
            self.assertIsNone(short.backend_pid)
            self.assertEqual(self.value("SELECT count(*) FROM pg_stat_activity"
                                        " WHERE datname = current_database()"), before)
        self.assertTrue(short.released)
        with self.locks.lease("long", "worker-a", 30, renew_every=0.1) as first:
            pid = wait_for_own_connection(first)
            self.assertNotEqual(pid, self.conn.info.backend_pid)
            self.assertEqual(self.value("SELECT application_name FROM pg_stat_activity WHERE pid = %s", pid),
                             "caio keep-alive")
        with self.locks.lease("long", "worker-a", 30, renew_every=0.1) as second:
            self.assertEqual(wait_for_own_connection(second), pid)
        # In a transaction of the manager's connection, the lease is taken
        # and renewed on a connection of its own (committed at once), and
        # released in the transaction (test_in_transaction.py).
        with self.conn.transaction():
            with self.locks.lease("busy-main", "worker-a", 30) as inside:
                self.assertEqual(inside.backend_pid, pid)
                other = caio.LockManager(self.connect())
                self.assertIsNone(other.acquire("busy-main", "worker-b", 30))
            self.assertTrue(inside.released)
        with self.assertRaises(ValueError):
            self.locks.lease("x", "worker-a", 1, renew_every=2)

    def test_takeover_sets_lost(self) -> None:
        """A takeover (through the test clock) sets lost within one
        renewal period, and the storage refuses the late write."""
        self.conn.execute("CREATE TABLE sends (wallet text PRIMARY KEY, fence bigint)")
        self.conn.execute("SELECT caio_protect('sends', 'fence', 'wallet', 'send:')")
        with self.locks.lease("send:0xdef", "worker-a", 3) as lease:  # renewed every 1 s
            self.conn.execute("INSERT INTO sends VALUES ('0xdef', %s)", (lease.token,))
            self.clock.advance(4)  # A pauses past its lease
            b = caio.LockManager(self.connect()).acquire("send:0xdef", "worker-b", 30)
            assert b is not None
            taken = time.monotonic()
            self.assertTrue(lease.lost.wait(1.5), "lost was not set within one renewal period")
            self.assertLess(time.monotonic() - taken, 1.5)
            self.assertIn("NULL", lease.lost_reason or "")
            with self.assertRaises(caio.LeaseLostError):
                lease.raise_if_lost()
            with self.assertRaises(caio.FencingError) as refused, caio.translating_errors():
                self.conn.execute("UPDATE sends SET fence = %s", (lease.token,))
            self.assertEqual(refused.exception.table, "sends")
        self.assertFalse(lease.released)
        self.assertEqual(self.locks.lease_of("send:0xdef"), b)

    def test_terminated_connection_sets_lost(self) -> None:
        """The keep-alive's server connection goes away: lost is set before
        the ttl ends."""
        with self.locks.lease("gone", "worker-a", 3) as lease:
            pid = wait_for_own_connection(lease)
            started = time.monotonic()
            self.value("SELECT pg_terminate_backend(%s)", pid)
            self.assertTrue(lease.lost.wait(3), "lost was not set within the ttl")
            self.assertLess(time.monotonic() - started, 3)
            self.assertIn("failed", lease.lost_reason or "")
        # Still held on the server: released through the manager's connection.
        self.assertTrue(lease.released)
        self.assertIsNone(self.locks.lease_of("gone"))

    def test_unanswered_renewal_sets_lost(self) -> None:
        """The server stops answering (its process stopped with SIGSTOP):
        lost is set when the lease would expire, not later."""
        with self.locks.lease("hang", "worker-a", 2) as lease:
            pid = wait_for_own_connection(lease)
            try:
                os.kill(pid, signal.SIGSTOP)
            except PermissionError:
                self.skipTest("the server's processes are not ours to stop")
            try:
                started = time.monotonic()
                self.assertTrue(lease.lost.wait(2.5), "lost was not set by the lease's expiry")
                self.assertLess(time.monotonic() - started, 2.5)
                self.assertIn("expire", lease.lost_reason or "")
            finally:
                os.kill(pid, signal.SIGCONT)
        # The stuck renewal got its answer after SIGCONT; the lease ended.
        self.assertIsNone(self.locks.lease_of("hang"))


class Errors(DatabaseTest):
    database = "caio_python_errors"

    def test_refusals_mapped(self) -> None:
        conn = self.conn
        conn.execute("CREATE TABLE accounts (wallet text PRIMARY KEY, fence bigint, balance int)")
        conn.execute("SELECT caio_protect('accounts', 'fence', 'wallet', 'send:')")
        conn.execute("CREATE TABLE docs (id int PRIMARY KEY, version int NOT NULL, body text)")
        conn.execute("SELECT caio_versioned('docs', 'version')")
        conn.execute("INSERT INTO docs VALUES (1, 1, 'a')")
        old = self.locks.acquire("send:0x1", "worker-a", 30)
        assert old is not None
        conn.execute("INSERT INTO accounts VALUES ('0x1', %s, 0)", (old.token,))
        self.clock.advance(31)
        new = self.locks.acquire("send:0x1", "worker-b", 30)
        assert new is not None

        with self.assertRaises(caio.FencingError) as lk001, caio.translating_errors():
            conn.execute("UPDATE accounts SET balance = 1, fence = %s", (old.token,))
        e1 = lk001.exception
        self.assertEqual((e1.sqlstate, e1.table, e1.schema), ("LK001", "accounts", "public"))
        self.assertIn(f"token {old.token}", e1.detail or "")
        self.assertIsInstance(e1.original, psycopg.Error)
        self.assertIsInstance(e1, caio.CaioError)
        self.assertIn("LK001", str(e1))

        with self.assertRaises(caio.MissingTokenError) as lk003, caio.translating_errors():
            conn.execute("UPDATE accounts SET balance = 2")
        self.assertEqual((lk003.exception.sqlstate, lk003.exception.table), ("LK003", "accounts"))

        with self.assertRaises(caio.VersionConflictError) as lk002, caio.translating_errors():
            conn.execute("UPDATE docs SET body = 'b', version = 5 WHERE id = 1")
        self.assertEqual((lk002.exception.sqlstate, lk002.exception.table), ("LK002", "docs"))

        # LK004 needs Citus to happen for real; the mapping is the same.
        with self.assertRaises(caio.NotOnThisNodeError) as lk004, caio.translating_errors():
            conn.execute("DO $$ BEGIN RAISE EXCEPTION 'not on this node' USING ERRCODE = 'LK004'; END $$")
        self.assertEqual(lk004.exception.sqlstate, "LK004")

        # The transaction helpers roll back as usual, and the connection goes on.
        with self.assertRaises(caio.FencingError):
            with caio.translating_errors(), conn.transaction():
                conn.execute("UPDATE accounts SET balance = 3, fence = %s", (old.token,))
        conn.execute("UPDATE accounts SET balance = 4, fence = %s", (new.token,))
        self.assertEqual(self.value("SELECT balance FROM accounts"), 4)

    def test_others_pass_unchanged(self) -> None:
        with self.assertRaises(psycopg.errors.InvalidParameterValue) as bad:
            self.locks.acquire("x", "worker-a", -1)  # 22023: a ttl not positive
        self.assertNotIsInstance(bad.exception, caio.CaioError)
        with self.assertRaises(psycopg.errors.UndefinedObject):  # NULL::"no_such_table"
            caio.claim(self.conn, "no_such_table", "worker-a", 30)
        self.assertIs(caio.translate_error(ValueError("x")).__class__, ValueError)

    def test_helpers_raise_refusals(self) -> None:
        """The nonce helpers raise caio's classes themselves."""
        address = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
        old = self.locks.acquire("send:" + address, "worker-a", 30)
        assert old is not None
        with self.conn.transaction():
            nonce = caio.reserve_nonce(self.conn, 1, address, old)
        self.clock.advance(31)
        self.assertIsNotNone(self.locks.acquire("send:" + address, "worker-b", 30))
        with self.assertRaises(caio.FencingError):
            caio.mark_nonce(self.conn, 1, address, nonce, "signed", lease=old)
        with self.assertRaises(caio.MissingTokenError):
            caio.mark_nonce(self.conn, 1, address, nonce, "signed")
