"""caio's Python client (psycopg 3): leases kept alive the way lock
libraries do it, caio's refusals as exceptions, nonce and claim helpers.

    locks = caio.LockManager(conn)
    with locks.lease("send:0xabc", "worker-a", 30) as lease:
        ...  # write under lease.token; lease.lost is set if it is lost

See doc/clients.md in caio's repository.
"""

from ._errors import (
    CaioError,
    FencingError,
    MissingTokenError,
    NotOnThisNodeError,
    VersionConflictError,
    translate_error,
    translating_errors,
)
from ._leases import (
    LEASE_ARGUMENT,
    Duration,
    KeptLease,
    Lease,
    LeaseLike,
    LeaseLostError,
    LockManager,
    NotAcquiredError,
    TestClock,
    lease_parameters,
)
from ._work import claim, mark_nonce, release_nonce, reserve_nonce, sync_nonce, table_identifier

__version__ = "0.7.0"

__all__ = [
    "CaioError",
    "FencingError",
    "VersionConflictError",
    "MissingTokenError",
    "NotOnThisNodeError",
    "translate_error",
    "translating_errors",
    "LEASE_ARGUMENT",
    "Duration",
    "KeptLease",
    "Lease",
    "LeaseLike",
    "LeaseLostError",
    "LockManager",
    "NotAcquiredError",
    "TestClock",
    "lease_parameters",
    "claim",
    "reserve_nonce",
    "mark_nonce",
    "sync_nonce",
    "release_nonce",
    "table_identifier",
    "__version__",
]
