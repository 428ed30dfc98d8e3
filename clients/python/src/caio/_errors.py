"""caio's refusals as Python exceptions.

A refusal is an ordinary PostgreSQL error with one of caio's SQLSTATEs
(LK001 to LK004).  :func:`translate_error` turns a psycopg error with one of
those codes into the matching :class:`CaioError` subclass and returns any
other exception unchanged; :func:`translating_errors` does the same around a
block of the application's own queries.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Iterator, Optional, Type

import psycopg


class CaioError(Exception):
    """A refusal from caio.  ``sqlstate``, ``table`` (and ``schema``),
    ``detail`` and ``hint`` come from the server's error; ``original`` is
    the psycopg error it was made from."""

    sqlstate: str
    table: Optional[str]
    schema: Optional[str]
    detail: Optional[str]
    hint: Optional[str]
    original: psycopg.Error

    def __init__(self, original: psycopg.Error) -> None:
        diag = original.diag
        message = diag.message_primary or str(original)
        super().__init__(message)
        self.message = message
        self.sqlstate = original.sqlstate or ""
        self.table = diag.table_name
        self.schema = diag.schema_name
        self.detail = diag.message_detail
        self.hint = diag.message_hint
        self.original = original

    def __str__(self) -> str:
        if self.detail:
            return f"{self.message} ({self.sqlstate}): {self.detail}"
        return f"{self.message} ({self.sqlstate})"


class FencingError(CaioError):
    """LK001: the token is not the newest for its resource: the lease or
    claim was superseded or released.  Stop working on the resource."""


class VersionConflictError(CaioError):
    """LK002: a versioned row changed since it was read.  Re-read, retry."""


class MissingTokenError(CaioError):
    """LK003: a write to a protected row named no token (a bug in the
    code path that wrote it)."""


class NotOnThisNodeError(CaioError):
    """LK004: (Citus) caio's state does not live on this node: call caio
    on the coordinator."""


ERRORS: Dict[str, Type[CaioError]] = {
    "LK001": FencingError,
    "LK002": VersionConflictError,
    "LK003": MissingTokenError,
    "LK004": NotOnThisNodeError,
}


def translate_error(error: BaseException) -> BaseException:
    """The :class:`CaioError` that a psycopg error with one of caio's
    SQLSTATEs stands for; any other exception is returned as it is."""
    if isinstance(error, psycopg.Error) and error.sqlstate in ERRORS:
        return ERRORS[error.sqlstate](error)
    return error


@contextmanager
def translating_errors() -> Iterator[None]:
    """Raises caio's refusals in the block as :class:`CaioError`
    subclasses (chained to the psycopg error); other errors pass through
    unchanged::

        with caio.translating_errors():
            conn.execute("UPDATE transfers SET ... , fence_token = %s ...", ...)
    """
    try:
        yield
    except psycopg.Error as error:
        translated = translate_error(error)
        if translated is error:
            raise
        raise translated from error
