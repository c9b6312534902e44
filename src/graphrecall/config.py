"""Configuration from ``GRAPHRECALL_*`` environment variables, with offline defaults.

Every ``GRAPHRECALL_*`` variable is read here and nowhere else; the composition root
(``runtime.py``) hands each part the values it needs. ``load_settings`` turns a bad value
into a ``SettingsError`` whose message names the environment variable and what it accepts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from platformdirs import user_data_dir
from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "GRAPHRECALL_"
# Shorter keys are guessable; ``graphrecall keys create`` makes 40-character ones.
MIN_API_KEY_LENGTH = 16


# What --db (and GRAPHRECALL_DB) accepts, as every command's help says it.
DB_HELP = "a SQLite file path or sqlite:///PATH, or postgresql://user@host:port/dbname"


def default_db_path() -> Path:
    return Path(user_data_dir("graphrecall", appauthor=False)) / "graphrecall.db"


class SettingsError(ValueError):
    """A setting has a value graphrecall cannot use; the message names the variable."""


class Settings(BaseSettings):
    # An empty variable counts as unset (GRAPHRECALL_MODEL_CACHE= is not the current folder).
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, env_ignore_empty=True)

    db: str = Field(default_factory=lambda: str(default_db_path()), min_length=1)
    host: str = Field(default="127.0.0.1", min_length=1)
    port: int = Field(default=8000, ge=1, le=65535)
    # When set, ``serve`` makes sure this key exists (tests, containers).
    api_key: str | None = Field(default=None, min_length=MIN_API_KEY_LENGTH)
    # When set, ``serve`` makes sure a Memory Engine space with this 12-char slug exists.
    space: str | None = Field(default=None, pattern=r"^[a-z0-9]{12}$")
    # ``chat``: graphrecall's own MiniLM, fine-tuned on dialogue QA (docs/models.md);
    # ``minilm``: the stock all-MiniLM-L6-v2 on integer kernels (ml/quantize.py);
    # ``minilm-exact``: its shipped weights as they are; ``none``: lexical-only. A database
    # keeps the embedder it was started with until ``graphrecall reembed``.
    embedder: Literal["chat", "minilm", "minilm-exact", "none"] = "chat"
    # onnxruntime threads per embedding call: one leaves a core to the API (docs/models.md).
    embed_threads: int = Field(default=1, ge=1, le=256)
    # Where the embedder's integer-kernel model is cached; unset: the user cache directory.
    model_cache: Path | None = None
    # A directory with model.onnx + tokenizer.json, or the URL of a /rerank endpoint.
    # Unset: the cross_encoder reranker uses the offline bi-encoder + lexical scorer.
    cross_encoder: str | None = None
    cross_encoder_model: str | None = None
    cross_encoder_api_key: str | None = None
    # auto: the LLM extractor when GRAPHRECALL_LLM_BASE_URL is set, else the offline one.
    extractor: Literal["auto", "offline", "llm", "none"] = "auto"
    llm_base_url: str | None = None
    llm_model: str = Field(default="gpt-4o-mini", min_length=1)
    llm_api_key: str | None = None
    llm_concurrency: int = Field(default=4, ge=1, le=256)
    llm_max_retries: int = Field(default=3, ge=0, le=100)
    # Ingestion threads per process; unset: 2, or 1 on a one-core machine.
    worker_threads: int | None = Field(default=None, ge=1, le=256)
    # A worker holds each claimed task for this long, renewing it while it works; a task
    # whose holder stopped renewing (a killed process) is taken again after it expires.
    task_lease_seconds: float = Field(default=60.0, ge=2.0, le=86400.0)
    # How long a deleted memory's history (memory.history, memory.revert) is kept; 0, the
    # default: erased with the memory (docs/memory-engine.md, docs/security.md).
    deleted_history_seconds: int = Field(default=0, ge=0, le=10 * 365 * 86400)
    log_level: Literal["debug", "info", "warning", "error", "critical"] = "info"
    # Slow clients (docs/security.md): seconds to send a request's headers, to send its
    # body, and to start the next request on a kept-alive connection; and the most
    # connections served at once (beyond it, 503).
    http_header_timeout: float = Field(default=10.0, gt=0)
    http_body_timeout: float = Field(default=30.0, gt=0)
    http_keep_alive_timeout: int = Field(default=5, ge=1)
    http_max_connections: int = Field(default=1000, ge=1)
    # Processes that test callers' patterns on SQLite (grep, like_regex), off the server's
    # interpreter lock (store/sqlite/pattern_workers.py); 0: in the server's own process.
    regex_workers: int = Field(default=2, ge=0, le=64)
    # How many of one project's expensive reads (searches, memory.search, context) run at
    # once; the rest wait their turn, then 429 (services/admission.py); 0: no limit.
    project_concurrency: int = Field(default=2, ge=0, le=256)
    # The in-memory vector matrices' bound in MB (store/matrix_cache.py); unset: a quarter
    # of the machine's memory, at least 512.
    vector_cache_mb: int | None = Field(default=None, ge=16, le=2**24)
    # Show tracebacks instead of one-line errors on the command line.
    debug: bool = False

    @model_validator(mode="before")
    @classmethod
    def _lower_log_level(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("log_level"), str):
            data = {**data, "log_level": data["log_level"].lower()}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.extractor == "llm" and not self.llm_base_url:
            raise ValueError(
                "GRAPHRECALL_EXTRACTOR=llm needs GRAPHRECALL_LLM_BASE_URL (the URL of an"
                " OpenAI-compatible endpoint, e.g. http://localhost:11434/v1)"
            )
        return self


# Command-line options whose name is not their field's.
OPTIONS = {"worker_threads": "--threads"}


def env_name(field: str) -> str:
    return ENV_PREFIX + field.upper()


def load_settings(**overrides: Any) -> Settings:
    """``Settings()`` from the environment (and command-line ``overrides``), with a
    ``SettingsError`` naming each bad variable instead of pydantic's report."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError(describe(exc, overrides)) from None


def describe(exc: ValidationError, overrides: dict[str, Any] | None = None) -> str:
    problems = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "string_pattern_mismatch" and field == "space":
            message = "must be 12 lowercase letters or digits (graphrecall spaces list)"
        if not field:
            problems.append(message)
            continue
        option = OPTIONS.get(field, f"--{field.replace('_', '-')}")
        source = option if field in (overrides or {}) else env_name(field)
        value = error.get("input")
        shown = "" if field.endswith("api_key") else f" (got {value!r})"
        problems.append(f"{source}: {message}{shown}")
    return "; ".join(problems)
