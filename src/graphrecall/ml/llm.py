"""An OpenAI-compatible chat-completions client and the LLM extractor built on it.

Works with OpenAI, vLLM, Ollama, LM Studio and anything else that serves
``POST {base_url}/chat/completions``. Output is requested as a JSON object and validated
with pydantic; an answer that is not valid JSON, or not the expected shape, is retried with
the validation error quoted back to the model. Transport errors, 429 and 5xx are retried
with exponential backoff. A global semaphore bounds concurrent requests. When every retry
fails, :class:`ExtractionFailed` is raised and the ingestion task is recorded as failed; the
episode stays stored and unprocessed, so the task can be retried later.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from pydantic import ValidationError

from graphrecall.ml.extraction import Extraction, ExtractionFailed, ExtractionInput

log = logging.getLogger(__name__)

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class LlmError(RuntimeError):
    pass


class OpenAIChatClient:
    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        concurrency: int = 4,
        max_retries: int = 3,
        timeout: float = 60.0,
        backoff: float = 0.5,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.max_retries = max_retries
        self.backoff = backoff
        self.concurrency = max(1, concurrency)
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._http = httpx.Client(timeout=timeout)

    def complete_json(self, messages: Sequence[dict[str, str]]) -> dict[str, Any]:
        """One JSON-object answer; transport failures are retried with backoff."""
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "messages": list(messages),
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                with self._slots:
                    response = self._http.post(self.url, json=body, headers=headers)
            except httpx.HTTPError as exc:
                last = exc
                continue
            if response.status_code in RETRY_STATUS:
                last = LlmError(f"HTTP {response.status_code} from the LLM endpoint")
                continue
            if response.status_code >= 400:
                raise LlmError(f"HTTP {response.status_code}: {response.text[:300]}")
            try:
                content = response.json()["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                last = LlmError(f"not a chat-completions response: {exc}")
                continue
            return {"content": content}
        raise LlmError(f"LLM endpoint failed after {self.max_retries + 1} attempts: {last}")


SYSTEM = """You extract a knowledge graph from one message or document.
Return a JSON object: {"entities": [{"name", "label", "summary"}], "facts": [{"source",
"relation", "target", "fact", "valid_at", "invalid_at"}]}.
- entities: people, places, organisations, products, events, concepts worth remembering.
  The speaker (if given) is an entity; "I", "me", "my" refer to the speaker.
- facts: statements between two entities named exactly as in "entities". "relation" is
  UPPER_SNAKE_CASE (e.g. WORKS_AT, LIVES_IN, LIKES). "fact" is a short self-contained
  sentence with names instead of pronouns.
- valid_at / invalid_at: when the fact started / ended if the text says so, as written
  ("last Tuesday", "in 2019") or as an ISO 8601 date; otherwise null.
- Relations that hold one value at a time (where someone lives, works, their job title,
  partner, age, status): a newer value retires the older one, so name them as listed
  below; an ending (moved away, left, quit, divorced, broke up, sold) is a fact whose
  target is what ended. Add "past": true to a fact told as over ("I lived in Hamburg"),
  "also": true to one added beside others ("I also work at Globex").
Use only the listed entity and edge types when types are given."""


def _single_valued_hint() -> str:
    """The table's relations, for the prompt (ingest/single_valued.py is the one list)."""
    from graphrecall.ingest.single_valued import SLOTS

    lines = [f"{slot.name}: {slot.prompt}" for slot in SLOTS if slot.prompt]
    return "Single-valued relations: " + " | ".join(lines)


def _prompt(item: ExtractionInput) -> str:
    parts = [f"Reference time: {item.reference_time}", _single_valued_hint()]
    if item.speaker:
        parts.append(f"Speaker: {item.speaker}")
    if item.entity_types:
        parts.append(
            "Entity types: "
            + "; ".join(f"{t.name}: {t.description}".rstrip(": ") for t in item.entity_types)
        )
    if item.edge_types:
        parts.append(
            "Edge types: "
            + "; ".join(f"{t.name}: {t.description}".rstrip(": ") for t in item.edge_types)
        )
    parts.append(f"Text:\n{item.text}")
    return "\n".join(parts)


class LlmExtractor:
    name = "llm"

    def __init__(self, client: OpenAIChatClient, *, max_repairs: int = 2) -> None:
        self.client = client
        self.max_repairs = max_repairs

    def extract(self, items: list[ExtractionInput]) -> list[Extraction]:
        if len(items) <= 1:
            return [self._one(item) for item in items]
        with ThreadPoolExecutor(max_workers=self.client.concurrency) as pool:
            return list(pool.map(self._one, items))

    def _one(self, item: ExtractionInput) -> Extraction:
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": _prompt(item)},
        ]
        problem = ""
        for _ in range(self.max_repairs + 1):
            try:
                content = self.client.complete_json(messages)["content"]
            except LlmError as exc:
                raise ExtractionFailed(str(exc)) from exc
            try:
                return Extraction.model_validate(json.loads(content))
            except (ValueError, ValidationError) as exc:
                problem = str(exc)[:500]
                log.warning("LLM answer rejected (%s); asking again", problem)
                messages = [
                    *messages[:2],
                    {"role": "assistant", "content": str(content)[:2000]},
                    {
                        "role": "user",
                        "content": f"That was not valid: {problem}. Answer with the JSON object"
                        " only, in the required shape.",
                    },
                ]
        raise ExtractionFailed(f"the LLM kept answering invalid JSON: {problem}")
