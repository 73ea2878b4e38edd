"""Which database errors are outages (503) and which are conflicts with another
transaction (run again, then 409): ``sitemap_server.outages``."""

import psycopg.errors
import pytest
from sqlalchemy import exc as sa_exc

from sitemap_server.outages import database_unavailable, transaction_conflict


def wrapped(error: Exception) -> sa_exc.DBAPIError:
    """``error`` as SQLAlchemy raises it from the driver."""
    return sa_exc.DBAPIError.instance("UPDATE terms …", {}, error, psycopg.Error)


@pytest.mark.parametrize(
    "error",
    [
        psycopg.errors.DeadlockDetected("deadlock detected"),  # 40P01
        psycopg.errors.SerializationFailure("could not serialize access"),  # 40001
    ],
)
def test_a_deadlock_or_a_serialization_failure_is_a_conflict_not_an_outage(error):
    raised = wrapped(error)
    assert isinstance(raised, sa_exc.OperationalError)
    assert transaction_conflict(raised)
    assert not database_unavailable(raised)


@pytest.mark.parametrize(
    "error",
    [
        psycopg.OperationalError("connection refused"),  # no SQLSTATE: the server is gone
        psycopg.errors.AdminShutdown("terminating connection"),  # 57P01
        psycopg.errors.LockNotAvailable("lock timeout"),  # 55P03
    ],
)
def test_an_outage_is_no_conflict(error):
    raised = wrapped(error)
    assert database_unavailable(raised)
    assert not transaction_conflict(raised)


def test_a_unique_violation_is_neither():
    raised = wrapped(psycopg.errors.UniqueViolation("duplicate key"))
    assert isinstance(raised, sa_exc.IntegrityError)
    assert not transaction_conflict(raised)
    assert not database_unavailable(raised)
