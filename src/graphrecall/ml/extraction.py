"""What an extractor turns one episode into: entities and facts between them.

Two implementations sit behind the :class:`Extractor` protocol: the offline default
(spaCy's small English pipeline shipped on PyPI, plus dependency-parse rules) and an LLM
extractor for any OpenAI-compatible endpoint. Both return the same pydantic types, so the
ingestion pipeline does not care which one ran.
"""

from __future__ import annotations

import logging
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from graphrecall.domain import limits

log = logging.getLogger(__name__)

# What an extracted record may hold. A name is a node's name, so it has the cap of a name
# given through the API; a relation names an edge type; a fact is one statement. These are
# not checked when a record is built (an extractor reading a 10,000-character message with
# no full stop must not fail the episode) but by :func:`bounded`, which every extraction
# passes before it is applied.
MAX_NAME_CHARS = limits.MAX_NAME_CHARS
MAX_RELATION_CHARS = 100
MAX_FACT_CHARS = 2000


class ExtractedEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1)
    label: str | None = None
    summary: str | None = None
    attributes: dict[str, str | int | float | bool] = Field(default_factory=dict)


class ExtractedFact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    source: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    target: str = Field(min_length=1)
    fact: str = Field(min_length=1)
    # Time expressions as written in the text ("last Tuesday", "in 2019"), resolved later
    # against the episode's reference time; or RFC 3339 timestamps.
    valid_at: str | None = None
    invalid_at: str | None = None
    # Which rule of the offline extractor read it ("clause", "statement", "caption"), or
    # "json_record"; shown in ingestion traces. None from a model.
    rule: str | None = None
    # How the statement was told, for relations that hold one value at a time
    # (ingest/single_valued.py): in the past tense ("I lived in Hamburg": history, not
    # the current value), or as an addition ("I also work at Globex": retires nothing).
    past: bool = False
    also: bool = False


class Extraction(BaseModel):
    model_config = ConfigDict(extra="ignore")

    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)


def bounded(extraction: Extraction) -> tuple[Extraction, list[str]]:
    """``extraction`` within the caps, and what was changed to get there (for the log and
    the ingestion trace): an entity whose name is longer than a name may be is dropped with
    the facts that name it (a 400-character "word" is not a name, and a cut one would be
    a node nobody said); a relation is cut at its last word that fits, a fact's text at
    the cap. Whatever the API accepts can therefore be applied."""
    notes: list[str] = []
    entities = []
    for entity in extraction.entities:
        if len(entity.name) > MAX_NAME_CHARS:
            notes.append(f"entity of {len(entity.name)} characters dropped (cap {MAX_NAME_CHARS})")
        else:
            entities.append(entity)
    facts = []
    for fact in extraction.facts:
        longest = max(len(fact.source), len(fact.target))
        if longest > MAX_NAME_CHARS:
            notes.append(f"fact about a name of {longest} characters dropped: {fact.relation[:40]}")
            continue
        changes: dict[str, str] = {}
        if len(fact.relation) > MAX_RELATION_CHARS:
            cut = fact.relation[:MAX_RELATION_CHARS]
            changes["relation"] = cut.rsplit("_", 1)[0] if "_" in cut else cut
            notes.append(f"relation of {len(fact.relation)} characters cut to {MAX_RELATION_CHARS}")
        if len(fact.fact) > MAX_FACT_CHARS:
            changes["fact"] = fact.fact[: MAX_FACT_CHARS - 1] + "\u2026"
            notes.append(f"fact text of {len(fact.fact)} characters cut to {MAX_FACT_CHARS}")
        facts.append(fact.model_copy(update=changes) if changes else fact)
    if not notes:
        return extraction, notes
    for note in notes:
        log.info("extraction bounded: %s", note)
    return extraction.model_copy(update={"entities": entities, "facts": facts}), notes


class EntityType(BaseModel):
    name: str
    description: str = ""


class EdgeType(BaseModel):
    name: str
    description: str = ""


class ExtractionInput(BaseModel):
    """One episode to extract from. ``speaker`` is who said it (message episodes);
    first-person pronouns refer to the speaker."""

    text: str
    speaker: str | None = None
    speaker_label: str | None = None
    reference_time: str
    entity_types: list[EntityType] = Field(default_factory=list)
    edge_types: list[EdgeType] = Field(default_factory=list)
    previous_text: str | None = None


class Extractor(Protocol):
    name: str

    def extract(self, items: list[ExtractionInput]) -> list[Extraction]:
        """Extract from a batch of episodes, in order. Raises ExtractionFailed when the
        backend keeps failing (the caller records a failed task)."""
        ...


class ExtractionFailed(RuntimeError):
    """The extractor could not produce a valid result (after its retries)."""
