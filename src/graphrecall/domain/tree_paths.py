"""Memory tree paths: the lenient wire form in, the stored dotted form, the display form out.

A memory lives at a *tree path*, a sequence of labels (``[A-Za-z0-9_-]+``). It is stored
dotted (``share.auth``; the root is ``""``) and shown slashed with a leading ``/``
(``/share/auth``; the root is ``/``). The wire accepts ``/`` or ``.`` separators, collapses
runs of them and drops leading and trailing ones. ``~`` as the first segment is the
caller's home, stored as ``home.<principal>`` and shown as ``~`` again.
"""

from __future__ import annotations

import re

from graphrecall.domain.errors import BadRequest

LABEL = r"[A-Za-z0-9_-]+"
_LABEL = re.compile(rf"^{LABEL}$")
_SEPARATORS = re.compile(r"[./]+")
HOME_ROOT = "home"
MAX_PATH_CHARS = 2048


def home_of(principal_id: str) -> str:
    """The stored path of a principal's home (``home.<id without hyphens>``)."""
    return f"{HOME_ROOT}.{principal_id.replace('-', '')}"


def _collapse(text: str) -> str:
    return _SEPARATORS.sub(".", text).strip(".")


def _expand_home(text: str, home: str, *, param: str) -> str:
    """Replace a leading ``~`` segment with ``home``; ``~`` anywhere else is an error."""
    if text == "~" or text.startswith(("~/", "~.")):
        text = home + text[1:]
    if "~" in text:
        raise BadRequest(f"{param}: '~' is only allowed as the first path segment", param=param)
    return text


def to_stored(path: str | None, home: str, *, param: str) -> str:
    """A wire path (``/a/b``, ``a.b``, ``~/notes``) -> the stored dotted form."""
    if path is None:
        return ""
    text = path.strip()
    if len(text) > MAX_PATH_CHARS:
        raise BadRequest(f"{param}: at most {MAX_PATH_CHARS} characters", param=param)
    text = _expand_home(text, home, param=param)
    stored = _collapse(text)
    for label in stored.split(".") if stored else ():
        if not _LABEL.match(label):
            raise BadRequest(
                f"{param}: {label!r} is not a valid path label (letters, digits, '_' and '-')",
                param=param,
            )
    return stored


def to_display(stored: str, home: str) -> str:
    """The stored dotted form -> ``/a/b`` (root ``/``; the caller's home as ``~``)."""
    if stored == home or stored.startswith(home + "."):
        rest = stored[len(home) + 1 :]
        return "~/" + rest.replace(".", "/") if rest else "~"
    return "/" + stored.replace(".", "/")


def to_display_named(stored: str, name: str, home: str) -> str:
    """A named memory's display path, ``tree/name`` (``/name`` at the root)."""
    tree = to_display(stored, home)
    return f"{tree.rstrip('/')}/{name}"


def split_named(path: str) -> tuple[str, str]:
    """``/share/auth/jwt`` -> (``/share/auth``, ``jwt``): the name is the last segment."""
    tree, _, name = path.strip().rpartition("/")
    return tree, name


def normalize_filter(raw: str, home: str) -> str | None:
    """A tree *filter* as typed -> its dotted form, or None for "no filter".

    Only separators and ``~`` are rewritten; query syntax (``*``, ``!``, ``|``, ``&``,
    ``{n,m}``, ``@``, ``%``) passes through to the filter compiler untouched.
    """
    text = raw.strip()
    if text in ("", "/"):
        return None
    if text == "~" or text.startswith(("~/", "~.")):
        text = home + text[1:]
    return _collapse(text) or None


def is_under(stored: str, base: str) -> bool:
    """True when ``stored`` is ``base`` or one of its descendants (root holds everything)."""
    return not base or stored == base or stored.startswith(base + ".")


def rebase(stored: str, source: str, destination: str) -> str:
    """Replace the prefix ``source`` of ``stored`` with ``destination``."""
    rest = stored[len(source) :].lstrip(".") if source else stored
    return ".".join(part for part in (destination, rest) if part)
