"""What the tests share: a fresh database with caio for each test class, on
the server the PG* environment variables name (a superuser: the tests move
caio's test clock and start token epochs)."""

from __future__ import annotations

import unittest
from typing import Any, List

import psycopg

import caio


def fresh_database(name: str) -> str:
    """Drops and creates database ``name`` with caio; returns its conninfo
    (the PG* variables give the rest)."""
    with psycopg.connect(autocommit=True) as admin:
        admin.execute("SET client_min_messages = warning")
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(dbname=name, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION caio")
    return f"dbname={name}"


class DatabaseTest(unittest.TestCase):
    """Each test class gets a fresh database (``cls.conninfo``); each test
    gets an autocommit connection ``self.conn`` and a LockManager on it, and
    may open more with ``self.connect()``.  caio's clock is put back after
    each test."""

    database = "caio_python"
    conninfo = ""

    @classmethod
    def setUpClass(cls) -> None:
        cls.conninfo = fresh_database(cls.database)

    def setUp(self) -> None:
        self._conns: List[psycopg.Connection[Any]] = []
        self.conn = self.connect()
        self.locks = caio.LockManager(self.conn)
        self.clock = caio.TestClock(self.conn)

    def tearDown(self) -> None:
        self.clock.reset()
        self.locks.close()
        for conn in self._conns:
            conn.close()

    def connect(self, **kwargs: Any) -> "psycopg.Connection[Any]":
        conn = psycopg.connect(self.conninfo, autocommit=True, **kwargs)
        self._conns.append(conn)
        return conn

    def value(self, query: str, *params: Any) -> Any:
        row = self.conn.execute(query, params).fetchone()
        assert row is not None
        return row[0]
