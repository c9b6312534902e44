"""Who is speaking in a text episode written as a chat: ``Bob: I moved to Berlin``,
``[Bob] I moved to Berlin``, or a log of such lines.

Such an episode is read as each speaker's own messages (``turns``): "I" in Bob's line is
Bob, no entity is made of the prefix ("Bob:", "Speaker"), and an assistant's lines
("Assistant:", "AI:", "Bot:") are read as an assistant's, which makes no fact about
itself. A line without a prefix continues the turn before it.

What counts as a prefix: a name of at most three capitalised words (or a role: User,
Assistant, ...) before a colon, or any name in square brackets, at the start of a line.
Not a prefix: a heading word ("Note:", "Update:", "Summary:", "Q:", "Re:", ...), a time
("10:30"), a URL. A single ``Name: text`` line counts only when its text reads as speech
(it says "I", "my", "we", "you", ...): "Berlin: a city of 3.7 million" is no speaker's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = r"[A-Z][\w'.-]*"
_NAME = rf"{_WORD}(?: {_WORD}){{0,2}}"
_COLON = re.compile(rf"^\s*(?P<name>{_NAME})\s*:\s+(?P<text>\S.*)$")
_BRACKET = re.compile(r"^\s*\[(?P<name>[^\[\]\n:]{1,40})\]\s*:?\s*(?P<text>\S.*)$")
# Words that open a line with a colon without naming a speaker.
HEADINGS = frozenset(
    """note notes nb update updates summary subject re fwd fw from to cc bcc date time
    warning caution tip hint q a question answer ps p.s todo edit source title example
    important reminder status result results step total price location address phone
    email agenda action decision context background conclusion goal task problem
    solution description name topic tags tag category type url link file path error
    info debug output input response request reply quote meeting minutes attendees
    when where who what why how day week month year today tomorrow yesterday morning
    afternoon evening night monday tuesday wednesday thursday friday saturday sunday
    key value id ref chapter section part item
    """.split()  # noqa: SIM905
)
# Roles written as a speaker.
ASSISTANTS = frozenset({"assistant", "ai", "bot", "chatbot", "system", "agent", "gpt"})
USERS = frozenset({"user", "human", "me", "customer", "client"})
_SPEECH = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|we|we're|our|us|you|your)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Turn:
    speaker: str  # as written ("Bob", "Assistant")
    text: str
    role: str  # "user" (a person speaking) or "assistant"


def _prefix(line: str) -> tuple[str, str, bool] | None:
    """(name, text, bracketed) of a line that opens with a speaker, else None."""
    for pattern, bracketed in ((_BRACKET, True), (_COLON, False)):
        match = pattern.match(line)
        if match is None:
            continue
        name = " ".join(match.group("name").split()).strip(" .")
        text = match.group("text").strip()
        if not name or not any(ch.isalpha() for ch in name) or text.startswith("//"):
            return None
        if name.casefold() in HEADINGS or name.split()[0].casefold() in HEADINGS:
            return None
        return name, text, bracketed
    return None


def turns(text: str) -> list[Turn] | None:
    """The speakers' turns of a text written as a chat, or None when it is not one."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    first = _prefix(lines[0])
    if first is None:
        return None
    out: list[tuple[str, list[str], bool]] = []
    for line in lines:
        found = _prefix(line)
        if found is None:
            out[-1][1].append(line.strip())  # a turn on several lines
            continue
        name, said, bracketed = found
        out.append((name, [said], bracketed))
    # One "Name: text" line: a speaker only when what follows reads as speech.
    if len(out) == 1 and not out[0][2] and not _SPEECH.search(" ".join(out[0][1])):
        return None
    return [
        Turn(
            speaker=name,
            text=" ".join(said),
            role="assistant" if name.casefold() in ASSISTANTS else "user",
        )
        for name, said, _ in out
    ]


def strip_own_prefix(text: str, speaker: str | None) -> str:
    """A message whose text repeats its speaker's name as a prefix ("Bob: I moved ..."
    sent as Bob's message) without it."""
    if not speaker:
        return text
    found = _prefix(text.split("\n", 1)[0])
    if found is not None and found[0].casefold() == speaker.casefold():
        rest = text.split("\n", 1)
        return found[1] + ("\n" + rest[1] if len(rest) > 1 else "")
    return text
