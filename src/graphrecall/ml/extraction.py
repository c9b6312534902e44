"""What an extractor turns one episode into: entities and facts between them.

Two implementations sit behind the :class:`Extractor` protocol: the offline default
(spaCy's small English pipeline shipped on PyPI, plus dependency-parse rules) and an LLM
extractor for any OpenAI-compatible endpoint. Both return the same pydantic types, so the
ingestion pipeline does not care which one ran.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field


class ExtractedEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=200)
    label: str | None = None
    summary: str | None = None
    attributes: dict[str, str | int | float | bool] = Field(default_factory=dict)


class ExtractedFact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    source: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=100)
    target: str = Field(min_length=1, max_length=200)
    fact: str = Field(min_length=1, max_length=2000)
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
