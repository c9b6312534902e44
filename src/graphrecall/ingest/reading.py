"""An episode as the extractor reads it: the graph's user and who speaks, the extraction
input (a JSON document as sentences, the ontology's types), a chat-like text split into
its speakers' turns, and those turns' extractions merged back into one."""

from __future__ import annotations

import json
import logging
from typing import Any

from graphrecall.domain.models import Episode, Graph, Node, User
from graphrecall.ingest import speakers
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.ontology import types_of
from graphrecall.ml.extraction import (
    MAX_NAME_CHARS,
    EdgeType,
    EntityType,
    Extraction,
    ExtractionInput,
)

log = logging.getLogger(__name__)


def user_of_graph(ctx: IngestContext, graph: Graph) -> tuple[Node | None, User | None]:
    """A user graph's user node and user (None, None for other graphs)."""
    if graph.type != "user" or graph.user_uuid is None:
        return None, None
    user = ctx.store.get(User, graph.user_uuid, {"project_uuid": graph.project_uuid})
    if user is None:
        return None, None
    return ctx.store.get(Node, user.node_uuid, {"graph_uuid": graph.uuid}), user


def speaker_of(
    episode: Episode, user: User | None, user_node: Node | None
) -> tuple[str | None, bool]:
    """(speaker name, whether the speaker is the graph's user)."""
    if episode.source != "message":
        return None, False
    name = episode.role_name
    if episode.role == "user" and user_node is not None:
        if not name:
            return user_node.name, True
        known = {user_node.name.casefold()}
        if user is not None:
            known |= {x.casefold() for x in (user.first_name, user.user_id) if x}
        if name.casefold() in known or name.split()[0].casefold() in known:
            return user_node.name, True
    if name:
        return name, False
    return (episode.role or "speaker").capitalize(), False


def extraction_input(
    episode: Episode,
    graph: Graph,
    user: User | None,
    user_node: Node | None,
    ontology: dict[str, Any],
) -> ExtractionInput:
    """What the extractor is given for an episode: its text, speaker and reference
    time, and the ontology's types."""
    speaker, _ = speaker_of(episode, user, user_node)
    if speaker is not None and len(speaker) > MAX_NAME_CHARS:
        # Stored before names were capped: the speaker is still a name the extraction
        # can keep (bounded() would drop every fact about it).
        log.info("episode %s: speaker name cut to %d characters", episode.uuid, MAX_NAME_CHARS)
        speaker = speaker[:MAX_NAME_CHARS].rstrip()
    text = episode.content
    if episode.source == "json":
        text = json_to_text(episode.content)
    return ExtractionInput(
        text=text,
        speaker=speaker,
        speaker_label="Person" if episode.role in ("user", None) else "Assistant",
        reference_time=episode.reference_time,
        entity_types=[EntityType(**t) for t in types_of(ontology, "entity_types")],
        edge_types=[EdgeType(**t) for t in types_of(ontology, "edge_types")],
    )


def turns(
    episode: Episode, item: ExtractionInput, user: User | None, user_node: Node | None
) -> tuple[list[ExtractionInput], dict[str, bool]]:
    """What the extractor reads of an episode, and its speakers (name -> whether the
    speaker is the graph's user). A text written as a chat ("Bob: I moved to Berlin",
    "[Bob] ...", or a log of such lines: ``ingest/speakers.py``) is read as its speakers'
    messages, one extraction input per turn; a message that repeats its own speaker's
    name as a prefix is read without it."""
    if episode.source == "message":
        is_user = user_node is not None and item.speaker == user_node.name
        text = speakers.strip_own_prefix(item.text, episode.role_name or item.speaker)
        own = item if text == item.text else item.model_copy(update={"text": text})
        return [own], ({item.speaker: is_user} if item.speaker else {})
    found = speakers.turns(item.text) if episode.source == "text" else None
    if not found:
        return [item], {}
    out: list[ExtractionInput] = []
    who: dict[str, bool] = {}
    for turn in found:
        name, is_user = turn.speaker, False
        if turn.role == "assistant":
            label = "Assistant"
        else:
            label = "Person"
            if user_node is not None and _names_user(turn.speaker, user, user_node):
                name, is_user = user_node.name, True
        if label == "Person":
            who[name] = is_user
        out.append(
            item.model_copy(update={"text": turn.text, "speaker": name, "speaker_label": label})
        )
    return out, who


def _names_user(name: str, user: User | None, user_node: Node) -> bool:
    """ "Alice", "alice-42" or "User" written as the speaker of a user's graph's text."""
    known = {user_node.name.casefold(), *speakers.USERS}
    if user is not None:
        known |= {x.casefold() for x in (user.first_name, user.user_id) if x}
    return name.casefold() in known or name.split()[0].casefold() in known


def merged(results: list[Extraction]) -> Extraction:
    """The extractions of one episode's turns as one (each entity once, by name)."""
    if len(results) == 1:
        return results[0]
    entities: dict[str, Any] = {}
    facts = []
    for result in results:
        for entity in result.entities:
            known = entities.setdefault(entity.name.casefold(), entity)
            if known.label is None and entity.label:
                known.label = entity.label
        facts.extend(result.facts)
    return Extraction(entities=list(entities.values()), facts=facts)


def json_to_text(content: str) -> str:
    """A JSON document as sentences ("price: 30.") so text extraction can read it."""
    try:
        data = json.loads(content)
    except ValueError:
        return content
    lines: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path} {key}".strip())
        elif isinstance(value, list):
            for item in value:
                walk(item, path)
        else:
            lines.append(f"{path}: {value}.")

    walk(data, "")
    return " ".join(lines)[:5000]
