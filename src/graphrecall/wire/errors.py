"""Where a validation error points, as the faces name it to the caller."""

from __future__ import annotations

from collections.abc import Sequence


def param_path(loc: Sequence[int | str]) -> str:
    """('body', 'messages', 0, 'role') -> 'messages[0].role'."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.startswith(("function-", "tagged-union")) or part in ("list", "dict"):
            continue
        else:
            out += f".{part}" if out else part
    return out or "body"
