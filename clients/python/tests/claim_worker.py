"""A worker of test_work.WorkerLoop: claims jobs with caio.claim and
finishes each under its claim token, logging the finish in the same
transaction, until no job is pending (waiting for jobs that others claimed
to be finished or to expire); prints {"finished": N, "refused": N} as JSON.
    claim_worker.py CONNINFO HOLDER"""

from __future__ import annotations

import json
import sys
import time

import psycopg

import caio

TTL = 1.0
FINISH = """UPDATE jobs SET state = 'done', done_by = %(holder)s, claim_holder = NULL,
                   claim_expires_at = NULL, claim_token = %(token)s
             WHERE id = %(id)s"""
LOG = "INSERT INTO finishes (job, holder, token) VALUES (%(id)s, %(holder)s, %(token)s)"


def main(conninfo: str, holder: str) -> None:
    finished = refused = 0
    with psycopg.connect(conninfo, autocommit=True) as conn:
        while True:
            jobs = caio.claim(conn, "jobs", holder, TTL, max=3, filter="state = 'pending'")
            if not jobs:
                row = conn.execute("SELECT count(*) FROM jobs WHERE state = 'pending'").fetchone()
                if row is None or row[0] == 0:
                    break
                time.sleep(0.05)  # others hold the rest: wait for them to finish or expire
                continue
            for job in jobs:
                values = {"holder": holder, "token": job["claim_token"], "id": job["id"]}
                try:
                    with caio.translating_errors(), conn.transaction():
                        conn.execute(FINISH, values)
                        conn.execute(LOG, values)
                    finished += 1
                except caio.FencingError:
                    refused += 1  # taken over: not ours any more
    print(json.dumps({"finished": finished, "refused": refused}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
