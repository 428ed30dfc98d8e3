"""Nonce reservation and work claims, on the caller's connection and inside
its transaction: nothing here commits."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from ._errors import translating_errors
from ._leases import LEASE_ARGUMENT, Duration, LeaseLike, fetch_one, interval, lease_parameters

#: A table: a name, a (schema, name) pair, or a psycopg.sql.Composable.
Table = Union[str, Sequence[str], sql.Composable]


def _lease_argument(lease: Optional[LeaseLike]) -> Tuple[str, Tuple[Any, ...]]:
    if lease is None:
        return "NULL::caio_lease", ()
    return LEASE_ARGUMENT, lease_parameters(lease)


def reserve_nonce(conn: "psycopg.Connection[Any]", chain_id: int, address: str,
                  lease: Optional[LeaseLike] = None) -> int:
    """The next nonce of (chain, address) (``caio_nonce_reserve``), under
    ``lease`` when given.  Reserve in the transaction that records the
    payment: a rollback gives the nonce back."""
    argument, params = _lease_argument(lease)
    row = fetch_one(conn, f"SELECT caio_nonce_reserve(%s, %s, {argument})", (chain_id, address, *params))
    return int(row[0])


def mark_nonce(conn: "psycopg.Connection[Any]", chain_id: int, address: str, nonce: int, state: str,
               tx_hash: Optional[str] = None, lease: Optional[LeaseLike] = None) -> None:
    """Moves a reservation forward (``caio_nonce_mark``): ``'signed'``,
    ``'broadcast'`` (with ``tx_hash``), ``'mined'``, ``'dropped'`` or
    ``'released'``; under a lease taken over: :class:`FencingError`."""
    argument, params = _lease_argument(lease)
    fetch_one(conn, f"SELECT caio_nonce_mark(%s, %s, %s, %s, %s, {argument})",
              (chain_id, address, nonce, state, tx_hash, *params))


def sync_nonce(conn: "psycopg.Connection[Any]", chain_id: int, address: str, chain_count: int,
               lease: Optional[LeaseLike] = None) -> int:
    """Tells caio the chain's transaction count for the address
    (``caio_nonce_sync``); returns the next nonce reserve hands out.  A
    wallet whose nonces went under a lease is synced under that lease (the
    current one on the same resource); without one, only a superuser may
    sync it (caio 0.7.0)."""
    if lease is None:
        # The three-argument form: a role granted only that one can still
        # sync the wallets it may.
        row = fetch_one(conn, "SELECT caio_nonce_sync(%s, %s, %s)", (chain_id, address, chain_count))
    else:
        row = fetch_one(conn, f"SELECT caio_nonce_sync(%s, %s, %s, {LEASE_ARGUMENT})",
                        (chain_id, address, chain_count, *lease_parameters(lease)))
    return int(row[0])


def release_nonce(conn: "psycopg.Connection[Any]", chain_id: int, address: str, nonce: int) -> bool:
    """Hands an unused nonce reserved without a lease back
    (``caio_nonce_release``); True when it did."""
    row = fetch_one(conn, "SELECT caio_nonce_release(%s, %s, %s)", (chain_id, address, nonce))
    return bool(row[0])


def table_identifier(table: Table) -> sql.Composable:
    """A table name quoted for SQL: a string is one name (quoted as it
    is: ``"jobs"``), a sequence is a qualified one (``("queue", "jobs")``)."""
    if isinstance(table, sql.Composable):
        return table
    if isinstance(table, str):
        return sql.Identifier(table)
    return sql.Identifier(*table)


def claim(conn: "psycopg.Connection[Any]", table: Table, holder: str, ttl: Duration, *,
          max: int = 1, filter: Optional[str] = None, order_by: Optional[str] = None,
          ) -> List[Dict[str, Any]]:
    """Claims up to ``max`` unclaimed or expired rows of ``table`` (made
    claimable by ``caio_claimable``) for ``holder`` for ``ttl``
    (``caio_claim``), skipping rows that others are claiming; returns them
    as dicts, each with its new ``claim_token`` (an int).  ``filter`` is an
    SQL condition over the table's columns (``"state = 'pending'"``) and
    ``order_by`` a sort list (``"priority DESC, id"``); caio checks both.
    Runs on ``conn`` in its transaction: commit it (or use autocommit) to
    make the claim visible, then write to each row with its
    ``claim_token`` in the SET list."""
    query = sql.SQL("SELECT * FROM caio_claim(NULL::{}, %s, %s, max_rows => %s, filter => %s{})").format(
        table_identifier(table), sql.SQL(", order_by => %s") if order_by is not None else sql.SQL(""))
    params: List[Any] = [holder, interval(ttl), max, filter]
    if order_by is not None:
        params.append(order_by)
    with translating_errors(), conn.cursor(row_factory=dict_row) as cursor:
        return cursor.execute(query, params).fetchall()
