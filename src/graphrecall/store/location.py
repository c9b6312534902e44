"""Where a database is, read from the one string a user gives (``--db``,
``GRAPHRECALL_DB``, ``GraphRecall(...)``): a SQLite file or a PostgreSQL URL.

Anything else that looks like a URL is refused here, before a file is made: a mistyped
``mysql://...`` must not become a SQLite file named ``mysql:`` with a new, empty database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from graphrecall.domain.errors import BadRequest

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
# What the refusal lists, in the form each is written.
SERVED = "a file path, sqlite:///PATH, or postgresql://user@host:port/dbname"
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):/")


class UnsupportedLocation(BadRequest):
    """``--db`` names a kind of database graphrecall does not serve."""

    def __init__(self, message: str) -> None:
        super().__init__(message, param="db")


@dataclass(frozen=True)
class Location:
    backend: Literal["sqlite", "postgresql"]
    text: str  # the URL for PostgreSQL; the file's path for SQLite

    @property
    def path(self) -> Path:
        return Path(self.text)


def parse(location: str | Path) -> Location:
    text = str(location)
    if text.startswith(POSTGRES_SCHEMES):
        return Location("postgresql", text)
    if text.startswith("sqlite:///"):
        return Location("sqlite", text[len("sqlite:///") :])
    scheme = _URL.match(text)
    # One letter before ":/" is a Windows drive (C:/data/x.db), not a scheme.
    if scheme is not None and len(scheme.group(1)) > 1:
        name = scheme.group(1)
        hint = " (sqlite:///PATH has three slashes)" if name.lower() == "sqlite" else ""
        raise UnsupportedLocation(
            f"--db {name}://…: graphrecall does not serve {name!r} databases{hint};"
            f" it serves {SERVED}"
        )
    return Location("sqlite", text)


def is_postgres(location: str | Path) -> bool:
    return str(location).startswith(POSTGRES_SCHEMES)


def shown(location: str | Path) -> str:
    """``location`` fit for a log line: a PostgreSQL URL without its password."""
    text = str(location)
    if not is_postgres(text):
        return text
    parts = urlsplit(text)
    if parts.password is None:
        return text
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))
