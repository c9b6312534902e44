"""The regex dialect a caller may write (domain/safe_regex.py) against PostgreSQL itself:
every pattern the portable check accepts compiles there (as ``grep``'s ARE, through
store/postgres/regex.py, and as jsonpath's ``like_regex``), and every one it refuses is
one PostgreSQL refuses on at least one of those paths (an inline flag is read by
``like_regex`` alone), so one dialect serves both fields on both backends."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Memory
from graphrecall.store import Store
from graphrecall.store.postgres.regex import to_are
from tests import pg_server
from tests.domain.test_safe_regex import NOT_PORTABLE, PORTABLE

LIKE_REGEX = (
    'SELECT jsonb_path_exists(\'{"a": "x"}\','
    " ('$.a ? (@ like_regex ' || to_json(%s::text)::text || ')')::jsonpath)"
)


@pytest.fixture(scope="module")
def conn() -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    with psycopg.connect(pg_server.server_url(), autocommit=True) as connection:
        yield connection


def _refused(conn: psycopg.Connection[tuple[object, ...]], sql: str, pattern: str) -> bool:
    try:
        conn.execute(sql, (pattern,)).fetchone()
    except psycopg.errors.InvalidRegularExpression:
        return True
    except psycopg.errors.SyntaxError:  # jsonpath's own parser (e.g. an inline flag)
        return True
    return False


@pytest.mark.parametrize("pattern", PORTABLE)
def test_postgresql_accepts_every_portable_pattern(
    conn: psycopg.Connection[tuple[object, ...]], pattern: str
) -> None:
    assert not _refused(conn, "SELECT 'abc' ~ %s", to_are(pattern))
    assert not _refused(conn, LIKE_REGEX, pattern)


@pytest.mark.parametrize("pattern", NOT_PORTABLE)
def test_postgresql_refuses_every_pattern_the_check_refuses(
    conn: psycopg.Connection[tuple[object, ...]], pattern: str
) -> None:
    try:
        grep_refused = _refused(conn, "SELECT 'abc' ~ %s", to_are(pattern))
    except BadRequest:  # the ARE rewrite refuses it already (inline flags)
        grep_refused = True
    assert grep_refused or _refused(conn, LIKE_REGEX, pattern)


@pytest.mark.parametrize("pattern", ["((a{50}){50}){50}", r"\p{Greek}"])
def test_a_pattern_postgresql_refuses_at_run_time_is_a_bad_request(
    pg_url: str, open_pg: Callable[[str], Store], pattern: str
) -> None:
    """The store's last line (postgres/connection.py): a pattern that reaches PostgreSQL
    and is refused there ("too complex" cannot be known beforehand) is a 400, not a 500."""
    store = open_pg(pg_url)
    memory = Memory(
        uuid="01990000-0000-7000-8000-0000000003ab",
        space_uuid="s",
        content="aaa",
        meta={},
        tree="work",
        version_hash="h",
        created_at="2026-01-01T00:00:00.000000Z",
    )
    with store.transaction():
        store.insert([memory])  # PostgreSQL compiles a pattern at the first row it tests
    with pytest.raises(BadRequest) as info:
        store.find(Memory, {"space_uuid": "s"}, where=p.Regex("content", pattern))
    assert "PostgreSQL cannot run this pattern" in info.value.message
