"""Nonces, claims and tokens past 2^53 through the client, and a worker loop
with claim and a fenced finish in several processes at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest
from typing import Any, Dict, List

import psycopg
from psycopg import sql

import caio
from support import DatabaseTest

ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
HERE = os.path.dirname(os.path.abspath(__file__))


class Nonces(DatabaseTest):
    database = "caio_python_nonces"

    def test_nonce_helpers(self) -> None:
        conn = self.conn
        with self.locks.lease("send:" + ADDRESS.lower(), "worker-a", 30) as lease:
            with conn.transaction():
                self.assertEqual(caio.reserve_nonce(conn, 1, ADDRESS, lease), 0)
            try:
                with conn.transaction():
                    self.assertEqual(caio.reserve_nonce(conn, 1, ADDRESS, lease), 1)
                    raise RuntimeError("the payment's transaction rolls back")
            except RuntimeError:
                pass
            self.assertEqual(caio.reserve_nonce(conn, 1, ADDRESS, lease), 1)  # given back
            caio.mark_nonce(conn, 1, ADDRESS, 0, "signed", lease=lease)
            caio.mark_nonce(conn, 1, ADDRESS, 0, "broadcast", "0x" + "5f" * 32, lease)
            caio.mark_nonce(conn, 1, ADDRESS, 1, "released", lease=lease)
            self.assertEqual(caio.sync_nonce(conn, 1, ADDRESS, 1, lease), 1)  # under the lease
            self.assertEqual(self.value("SELECT state FROM caio_nonces WHERE nonce = 0"), "mined")
        # Without a lease.
        self.assertEqual(caio.reserve_nonce(conn, 5, ADDRESS), 0)
        self.assertTrue(caio.release_nonce(conn, 5, ADDRESS, 0))
        self.assertEqual(caio.reserve_nonce(conn, 5, ADDRESS), 0)
        with self.assertRaises(psycopg.errors.InvalidTextRepresentation):
            caio.reserve_nonce(conn, 5, "0xnot-an-address")


def has_order_by(conn: "psycopg.Connection[Any]") -> bool:
    row = conn.execute("SELECT 'order_by' = ANY(proargnames) FROM pg_proc WHERE proname = 'caio_claim'"
                       ).fetchone()
    return bool(row and row[0])


class Claims(DatabaseTest):
    database = "caio_python_claims"

    def setUp(self) -> None:
        super().setUp()
        self.conn.execute('DROP SCHEMA IF EXISTS "Queue" CASCADE')
        self.conn.execute('CREATE SCHEMA "Queue"')
        # A name that needs quoting, in a schema that does too.
        self.conn.execute('CREATE TABLE "Queue"."Job s" (id int PRIMARY KEY, priority int,'
                          " state text NOT NULL DEFAULT 'pending', result text)")
        self.conn.execute("""INSERT INTO "Queue"."Job s" (id, priority)
                             SELECT i, i % 3 FROM generate_series(1, 12) i""")
        self.conn.execute("""SELECT caio_claimable('"Queue"."Job s"')""")

    def test_claim(self) -> None:
        table = ("Queue", "Job s")
        pending = "state = 'pending'"
        rows = caio.claim(self.conn, table, "worker-a", 30, max=3, filter="state = 'pending' AND id > 2")
        self.assertEqual(len(rows), 3)
        for row in rows:
            self.assertGreater(row["id"], 2)
            self.assertEqual(row["claim_holder"], "worker-a")
            self.assertIsInstance(row["claim_token"], int)
        # The filter is a value, not SQL text spliced in: a bad one is caio's 42601.
        with self.assertRaises(psycopg.errors.SyntaxError):
            caio.claim(self.conn, table, "worker-a", 30, filter="true; DROP TABLE x")
        # A fenced finish with the claim token, and a stale one.
        first = rows[0]
        finish = sql.SQL("UPDATE {} SET state = 'done', claim_holder = NULL, claim_expires_at = NULL,"
                         " claim_token = %s WHERE id = %s").format(caio.table_identifier(table))
        with caio.translating_errors():
            self.conn.execute(finish, (first["claim_token"], first["id"]))
        with self.assertRaises(caio.FencingError), caio.translating_errors():
            self.conn.execute(finish, (first["claim_token"], first["id"]))
        with self.assertRaises(caio.MissingTokenError), caio.translating_errors():
            self.conn.execute(sql.SQL("UPDATE {} SET result = 'x' WHERE id = %s").format(
                caio.table_identifier(table)), (rows[1]["id"],))
        # Inside the caller's transaction: rolled back, the claim is gone.
        with self.assertRaises(RuntimeError):
            with self.conn.transaction():
                self.assertEqual(len(caio.claim(self.conn, table, "worker-b", 30, max=20, filter=pending)), 9)
                raise RuntimeError("roll back")
        self.assertEqual(len(caio.claim(self.conn, table, "worker-b", 30, max=20, filter=pending)), 9)

    def test_claim_order_by(self) -> None:
        if not has_order_by(self.conn):
            self.skipTest("this caio's caio_claim has no order_by (it comes with the claim-order branch)")
        rows = caio.claim(self.conn, ("Queue", "Job s"), "worker-a", 30, max=4,
                          filter="state = 'pending'", order_by="priority DESC, id")
        self.assertEqual([row["id"] for row in rows], [2, 5, 8, 11])
        with self.assertRaises(psycopg.errors.SyntaxError):
            caio.claim(self.conn, ("Queue", "Job s"), "worker-a", 30, order_by="id; SELECT 1")


class Tokens(DatabaseTest):
    database = "caio_python_tokens"

    def test_tokens_past_2_53(self) -> None:
        """After 65 token epochs (a token is epoch * 2^47 + n), tokens are
        past 2^53 (where a float, and a JavaScript number, loses precision):
        they round-trip exactly through leases, fenced writes and claims."""
        self.conn.execute("SELECT caio_start_token_epoch() FROM generate_series(1, 65)")
        lease = self.locks.acquire("big", "worker-a", 30)
        assert lease is not None
        self.assertEqual(lease.token, 65 * 2**47 + 1)
        self.assertGreater(lease.token, 2**53)
        self.assertNotEqual(int(float(lease.token)), lease.token)  # a float would not do
        renewed = self.locks.renew(lease, 30)
        assert renewed is not None
        self.assertEqual(renewed.token, lease.token)
        self.conn.execute("CREATE TABLE big (name text PRIMARY KEY, fence bigint)")
        self.conn.execute("SELECT caio_protect('big', 'fence', 'name')")
        with caio.translating_errors():
            self.conn.execute("INSERT INTO big VALUES ('big', %s)", (lease.token,))
        self.assertEqual(self.value("SELECT fence FROM big"), lease.token)
        self.assertEqual(self.value("SELECT fence::text FROM big"), str(65 * 2**47 + 1))
        self.assertTrue(self.locks.release(lease))
        # A token one off is refused.
        with self.assertRaises(caio.FencingError), caio.translating_errors():
            self.conn.execute("UPDATE big SET fence = %s", (lease.token - 1,))
        with self.locks.lease("big", "worker-a", 30) as kept:
            self.assertEqual(kept.token, 65 * 2**47 + 2)
        self.conn.execute("CREATE TABLE jobs (id int PRIMARY KEY)")
        self.conn.execute("INSERT INTO jobs VALUES (1)")
        self.conn.execute("SELECT caio_claimable('jobs')")
        [job] = caio.claim(self.conn, "jobs", "worker-a", 30)
        self.assertEqual(job["claim_token"], 65 * 2**47 + 3)


class WorkerLoop(DatabaseTest):
    """Several worker processes claim and finish (fenced) the same jobs,
    while a stalled worker (this test) sits on claims past their ttl, so
    that the workers take them over and its late finishes are refused.
    Afterwards: every job done once, no job finished twice."""

    database = "caio_python_workers"
    JOBS = 150
    WORKERS = 4

    def test_workers(self) -> None:
        conn = self.conn
        conn.execute("""CREATE TABLE jobs (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending',
                                           done_by text)""")
        conn.execute("INSERT INTO jobs (id) SELECT generate_series(1, %s)", (self.JOBS,))
        conn.execute("SELECT caio_claimable('jobs')")
        conn.execute("CREATE INDEX ON jobs (id) WHERE state = 'pending'")
        # One row per finish that committed: a job finished twice shows here.
        conn.execute("CREATE TABLE finishes (job int NOT NULL, holder text NOT NULL, token bigint NOT NULL)")
        stalled = caio.claim(conn, "jobs", "worker-stalled", 1, max=5, filter="state = 'pending'")
        self.assertEqual(len(stalled), 5)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        workers = [subprocess.Popen([sys.executable, os.path.join(HERE, "claim_worker.py"), self.conninfo,
                                     f"worker-{i}"], stdout=subprocess.PIPE, env=env, cwd=HERE)
                   for i in range(self.WORKERS)]
        results: List[Dict[str, Any]] = []
        for worker in workers:
            out, _ = worker.communicate(timeout=60)
            self.assertEqual(worker.returncode, 0)
            results.append(json.loads(out))
        # The stalled worker wakes: its jobs were taken over and finished.
        finish = """UPDATE jobs SET state = 'done', done_by = 'worker-stalled', claim_holder = NULL,
                           claim_expires_at = NULL, claim_token = %s WHERE id = %s"""
        for job in stalled:
            with self.assertRaises(caio.FencingError), caio.translating_errors():
                conn.execute(finish, (job["claim_token"], job["id"]))
        self.assertEqual(sum(r["finished"] for r in results), self.JOBS)
        self.assertEqual(self.value("SELECT count(*) FROM finishes"), self.JOBS)
        self.assertEqual(self.value("SELECT count(DISTINCT job) FROM finishes"), self.JOBS)
        self.assertEqual(self.value("SELECT count(*) FROM jobs WHERE state = 'done'"), self.JOBS)
        self.assertEqual(self.value("""SELECT count(*) FROM jobs JOIN finishes ON job = id
                                        WHERE done_by <> holder OR claim_token <> token"""), 0)
        self.assertEqual(self.value("SELECT count(*) FROM finishes WHERE job = ANY(%s) AND holder LIKE 'worker-_'",
                                    [job["id"] for job in stalled]), 5)


if __name__ == "__main__":
    unittest.main()
