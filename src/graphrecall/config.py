"""Configuration from ``GRAPHRECALL_*`` environment variables, with offline defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_db_path() -> Path:
    return Path(user_data_dir("graphrecall", appauthor=False)) / "graphrecall.db"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GRAPHRECALL_", frozen=True)

    db: str = Field(default_factory=lambda: str(default_db_path()))
    host: str = "127.0.0.1"
    port: int = 8000
    # When set, ``serve`` makes sure this key exists (tests, containers).
    api_key: str | None = None
    # When set, ``serve`` makes sure a Memory Engine space with this 12-char slug exists.
    space: str | None = None
    # ``minilm``: the bundled offline model on integer kernels (ml/quantize.py);
    # ``minilm-exact``: its shipped weights as they are; ``none``: lexical-only.
    embedder: Literal["minilm", "minilm-exact", "none"] = "minilm"
    # A directory with model.onnx + tokenizer.json, or the URL of a /rerank endpoint.
    # Unset: the cross_encoder reranker uses the offline bi-encoder + lexical scorer.
    cross_encoder: str | None = None
    cross_encoder_model: str | None = None
    cross_encoder_api_key: str | None = None
    # auto: the LLM extractor when GRAPHRECALL_LLM_BASE_URL is set, else the offline one.
    extractor: Literal["auto", "offline", "llm", "none"] = "auto"
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_concurrency: int = 4
    llm_max_retries: int = 3
    log_level: str = "info"
    # Slow clients (docs/security.md): seconds to send a request's headers, to send its
    # body, and to start the next request on a kept-alive connection; and the most
    # connections served at once (beyond it, 503).
    http_header_timeout: float = Field(default=10.0, gt=0)
    http_body_timeout: float = Field(default=30.0, gt=0)
    http_keep_alive_timeout: int = Field(default=5, ge=1)
    http_max_connections: int = Field(default=1000, ge=1)
