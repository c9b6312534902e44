"""ChatGPT's and Claude's data exports, read as one user's conversations.

Both services mail a zip whose ``conversations.json`` is a JSON list of conversations
(either file may be given):

- **ChatGPT**: each conversation has ``id`` (or ``conversation_id``), ``title``,
  ``create_time`` (epoch seconds) and ``mapping``, a tree of nodes (``parent``,
  ``children``, ``message``: ``author.role``, ``content.content_type`` and ``parts``,
  ``create_time``). A regenerated answer or an edited question forks the tree;
  ``current_node`` is the leaf the user last saw, so the conversation as read is the path
  from it back to the root (the forks not taken are left out, as the ChatGPT app shows).
- **Claude**: each conversation has ``uuid``, ``name``, ``created_at`` (ISO 8601) and
  ``chat_messages`` in order, each with ``sender`` (``human`` or ``assistant``),
  ``created_at`` and its text as ``content`` blocks (``type: text``) or ``text``.

Each conversation becomes a thread with ``thread_id`` ``chatgpt-<id>`` or
``claude-<uuid>`` (so a re-run finds it again), each user or assistant message a message
with its own time. System and tool messages, hidden context, non-text parts (images,
code runs, reasoning) and empty messages are left out and counted. A message longer than
a message may be (``MAX_MESSAGE_CHARS``) is split into consecutive messages.
"""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrecall.domain import limits
from graphrecall.library.importers.once import ImportProblem

if TYPE_CHECKING:
    from graphrecall.library.importers.records import Conversation

EXPORT_MEMBER = "conversations.json"
ASSISTANT_NAMES = {"chatgpt": "ChatGPT", "claude": "Claude"}
_CLAUDE_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}
_CHATGPT_TEXT = ("text", "multimodal_text")


def read_text(path: Path) -> str:
    """The file's text; for a zip (an export as mailed), its ``conversations.json``."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == EXPORT_MEMBER]
                if not names:
                    raise ImportProblem(f"{path} is a zip without a {EXPORT_MEMBER}")
                return archive.read(min(names, key=len)).decode("utf-8")
        return path.read_text(encoding="utf-8")
    except (OSError, zipfile.BadZipFile) as exc:
        raise ImportProblem(f"cannot read {path}: {exc}") from None
    except UnicodeDecodeError:
        raise ImportProblem(f"{path} is not UTF-8 text") from None


def kind_of(first: dict[str, Any]) -> str | None:
    """``"chatgpt"`` or ``"claude"`` when ``first`` (a file's first record) looks like
    a conversation of that export, else None."""
    if "mapping" in first and ("current_node" in first or "title" in first):
        return "chatgpt"
    if "chat_messages" in first:
        return "claude"
    return None


def conversations(kind: str, records: list[Any], user_id: str) -> Conversation:
    """The export's conversations as one :class:`~.records.Conversation`
    of ``user_id``, one thread per conversation."""
    from graphrecall.library.importers.records import Conversation

    found = Conversation(user_id, thread_ids=True)
    read = _chatgpt if kind == "chatgpt" else _claude
    for n, record in enumerate(records):
        if not isinstance(record, dict):
            raise ImportProblem(f"{kind} export: conversation {n} is not a JSON object")
        thread_id, messages, dropped = read(n, record)
        found.dropped += dropped
        if messages:  # a conversation with nothing to say makes no thread
            found.threads.setdefault(thread_id, []).extend(messages)
    return found


# -- ChatGPT -------------------------------------------------------------------------------


def _chatgpt(n: int, record: dict[str, Any]) -> tuple[str, list[dict[str, Any]], int]:
    mapping = record.get("mapping")
    source_id = record.get("conversation_id") or record.get("id")
    if not isinstance(mapping, dict) or not source_id:
        raise ImportProblem(f"ChatGPT export: conversation {n} has no id or no mapping")
    started = _from_epoch(record.get("create_time"))
    messages: list[dict[str, Any]] = []
    dropped = 0
    for node in _branch(mapping, record.get("current_node")):
        message = node.get("message")
        if not isinstance(message, dict):
            continue  # the tree's root holds no message
        role = (message.get("author") or {}).get("role")
        text = _chatgpt_text(message.get("content"))
        hidden = (message.get("metadata") or {}).get("is_visually_hidden_from_conversation")
        if role not in ("user", "assistant") or not text or hidden:
            dropped += 1
            continue
        when = _from_epoch(message.get("create_time")) or started
        messages += _messages(role, text, when, "chatgpt")
    return f"chatgpt-{source_id}", messages, dropped


def _branch(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root to ``current`` (or, without one, to the leaf reached by
    always taking the newest child), in conversation order."""
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    if isinstance(current, str) and current in mapping:
        node_id: Any = current
        while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            node = mapping[node_id]
            path.append(node if isinstance(node, dict) else {})
            node_id = path[-1].get("parent")
        return path[::-1]
    roots = [k for k, v in mapping.items() if isinstance(v, dict) and v.get("parent") is None]
    node_id = roots[0] if roots else None
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        path.append(mapping[node_id])
        children = mapping[node_id].get("children") or []
        node_id = children[-1] if children else None
    return path


def _chatgpt_text(content: Any) -> str:
    if not isinstance(content, dict) or content.get("content_type") not in _CHATGPT_TEXT:
        return ""  # code runs, browsing, reasoning, custom instructions: not the dialogue
    parts = content.get("parts") or []
    return "\n".join(p for p in parts if isinstance(p, str)).strip()  # dict parts: images


def _from_epoch(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    return None


# -- Claude --------------------------------------------------------------------------------


def _claude(n: int, record: dict[str, Any]) -> tuple[str, list[dict[str, Any]], int]:
    chat = record.get("chat_messages")
    source_id = record.get("uuid")
    if not isinstance(chat, list) or not source_id:
        raise ImportProblem(f"Claude export: conversation {n} has no uuid or no chat_messages")
    started = _from_iso(record.get("created_at"))
    messages: list[dict[str, Any]] = []
    dropped = 0
    for message in chat:
        if not isinstance(message, dict):
            dropped += 1
            continue
        role = _CLAUDE_ROLES.get(str(message.get("sender")))
        text = _claude_text(message)
        if role is None or not text:
            dropped += 1
            continue
        when = _from_iso(message.get("created_at")) or started
        messages += _messages(role, text, when, "claude")
    return f"claude-{source_id}", messages, dropped


def _claude_text(message: dict[str, Any]) -> str:
    """The text blocks of ``content`` (thinking, tool use and results left out), else
    ``text`` (older exports have only that)."""
    blocks = message.get("content")
    if isinstance(blocks, list):
        texts = [
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        joined = "\n".join(texts).strip()
        if joined:
            return joined
    text = message.get("text")
    return text.strip() if isinstance(text, str) else ""


def _from_iso(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()


# -- both ----------------------------------------------------------------------------------


def _messages(role: str, text: str, when: str | None, kind: str) -> list[dict[str, Any]]:
    name = ASSISTANT_NAMES[kind] if role == "assistant" else None
    return [
        {"role": role, "name": name, "content": part, "reference_time": when}
        for part in split(text)
    ]


def split(text: str, most: int = limits.MAX_MESSAGE_CHARS) -> list[str]:
    """``text`` in pieces of at most ``most`` characters, cut at a line break (else a
    space) where one is near the end, so each piece still reads as text."""
    pieces = []
    while len(text) > most:
        cut = max(text.rfind("\n", most // 2, most), text.rfind(" ", most // 2, most))
        cut = cut if cut > 0 else most
        pieces.append(text[:cut].strip())
        text = text[cut:].strip()
    pieces.append(text)
    return [p for p in pieces if p]


def parse(text: str, path: Path) -> Any:
    """``json.loads`` with the file named in its error."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ImportProblem(f"{path}: not JSON ({exc})") from None
