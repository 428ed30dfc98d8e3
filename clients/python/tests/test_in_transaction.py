"""A kept lease whose block ends inside a transaction of the manager's
connection (the fourth security review's F4): a fenced write in that
transaction holds caio's lock on the resource until it ends, so a release
from any other connection would wait for a transaction that cannot end
before the block does.  Each test runs the pattern in a thread and fails,
rather than hangs, when it takes more than a few seconds."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, List

import psycopg
from psycopg.pq import TransactionStatus

import caio
from support import DatabaseTest

LIMIT = 5.0  # seconds: the pattern takes milliseconds


class LeaseInCallersTransaction(DatabaseTest):
    database = "caio_python_in_tx"

    def setUp(self) -> None:
        super().setUp()
        self.conn.execute("CREATE TABLE IF NOT EXISTS jobs (name text PRIMARY KEY, fence bigint)")
        self.conn.execute("TRUNCATE jobs")
        if self.value("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'jobs'::regclass") == 0:
            self.conn.execute("SELECT caio_protect('jobs', 'fence', 'name', 'job:')")
        self.other = caio.LockManager(self.connect())

    def finishes(self, work: Callable[[], None]) -> None:
        """Runs ``work`` in a thread; fails if it has not finished within
        LIMIT seconds, after ending the sessions of the test's database that
        wait for a lock (so that the thread, and the test run, end)."""
        errors: List[BaseException] = []

        def run() -> None:
            try:
                work()
            except BaseException as error:
                errors.append(error)

        thread = threading.Thread(target=run, daemon=True)
        started = time.monotonic()
        thread.start()
        thread.join(LIMIT)
        if thread.is_alive():
            waiting = self.stuck_sessions()
            thread.join(10)
            self.fail(f"the block did not end within {LIMIT} s; sessions waiting for a lock: {waiting}")
        if errors:
            raise errors[0]
        self.assertLess(time.monotonic() - started, LIMIT)

    def stuck_sessions(self) -> Any:
        with psycopg.connect(self.conninfo, autocommit=True) as admin:
            return admin.execute(
                "SELECT application_name, pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'").fetchall()

    def test_fenced_write_then_commit(self) -> None:
        """The finding's pattern: the release joins the transaction, and the
        lease ends when the write under it commits."""
        def work() -> None:
            with self.conn.transaction():
                with self.locks.lease("job:a", "worker-a", 30) as lease:
                    self.conn.execute("INSERT INTO jobs VALUES ('a', %s)", (lease.token,))
                self.assertTrue(lease.released)
                live = self.other.lease_of("job:a")  # not committed yet: still held
                self.assertIsNotNone(live)
                assert live is not None
                self.assertEqual(live.token, lease.token)
                self.assertIsNone(self.other.acquire("job:a", "worker-b", 30))
            self.assertIsNone(self.other.lease_of("job:a"))
            taken = self.other.acquire("job:a", "worker-b", 30)
            assert taken is not None
            self.assertGreater(taken.token, lease.token)
            self.assertEqual(self.value("SELECT fence FROM jobs WHERE name = 'a'"), lease.token)

        self.finishes(work)

    def test_renewed_while_in_transaction(self) -> None:
        """Renewals during the transaction are not held up by its write, and
        the block still ends at once."""
        def work() -> None:
            with self.conn.transaction():
                with self.locks.lease("job:b", "worker-a", 1) as lease:  # renewed every 1/3 s
                    self.conn.execute("INSERT INTO jobs VALUES ('b', %s)", (lease.token,))
                    time.sleep(1.5)
                    self.assertFalse(lease.lost.is_set(), lease.lost_reason)
                self.assertTrue(lease.released)
            self.assertIsNone(self.other.lease_of("job:b"))

        self.finishes(work)

    def test_rollback_leaves_lease_to_expire(self) -> None:
        """An exception rolls the transaction back, and the release with it:
        the lease stays with its holder (who gets it back, same token) until
        it expires."""
        def work() -> None:
            with self.assertRaises(ZeroDivisionError):
                with self.conn.transaction():
                    with self.locks.lease("job:c", "worker-a", 30) as lease:
                        self.conn.execute("INSERT INTO jobs VALUES ('c', %s)", (lease.token,))
                        1 / 0
            self.assertTrue(lease.released)  # in the transaction that rolled back
            self.assertIsNone(self.other.acquire("job:c", "worker-b", 30))
            again = self.locks.acquire("job:c", "worker-a", 30)
            assert again is not None
            self.assertEqual(again.token, lease.token)
            self.clock.advance(31)
            self.assertIsNotNone(self.other.acquire("job:c", "worker-b", 30))

        self.finishes(work)
        self.assertEqual(self.value("SELECT count(*) FROM jobs"), 0)

    def test_failed_transaction(self) -> None:
        """A statement fails after the fenced write: the server has aborted
        the transaction and let go of its locks at the error, so the lease
        is released at once on a connection of its own, before the
        rollback."""
        def work() -> None:
            with self.assertRaises(psycopg.errors.DivisionByZero):
                with self.conn.transaction():
                    try:
                        with self.locks.lease("job:d", "worker-a", 30) as lease:
                            self.conn.execute("INSERT INTO jobs VALUES ('d', %s)", (lease.token,))
                            self.conn.execute("SELECT 1 / 0")
                    finally:  # the transaction has failed, and is not rolled back yet
                        self.assertEqual(self.conn.info.transaction_status, TransactionStatus.INERROR)
                        self.assertTrue(lease.released)
                        self.assertIsNone(self.other.lease_of("job:d"))

        self.finishes(work)

    def test_implicit_transaction(self) -> None:
        """Outside autocommit, psycopg opens the transaction itself at the
        block's first statement; the release joins it and commits with it."""
        conn = self.connect()
        conn.autocommit = False
        locks = caio.LockManager(conn)

        def work() -> None:
            with locks.lease("job:e", "worker-a", 30) as lease:
                conn.execute("INSERT INTO jobs VALUES ('e', %s)", (lease.token,))
            self.assertTrue(lease.released)
            self.assertIsNotNone(self.other.lease_of("job:e"))
            conn.commit()
            self.assertIsNone(self.other.lease_of("job:e"))

        try:
            self.finishes(work)
        finally:
            locks.close()

    def test_other_connections_transaction(self) -> None:
        """A transaction of another connection writes under the lease and
        stays open past the block: the release waits for it no longer than
        the lease has left, then gives up (released is False); the lease
        expires by itself."""
        writer = self.connect()

        def work() -> None:
            with writer.transaction():
                with self.locks.lease("job:f", "worker-a", 2) as lease:
                    writer.execute("INSERT INTO jobs VALUES ('f', %s)", (lease.token,))
                self.assertFalse(lease.released)
            self.assertIsNotNone(self.locks.acquire("job:f", "worker-b", 30, wait=3))

        self.finishes(work)
