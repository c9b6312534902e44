"""Settings: every GRAPHRECALL_* variable is validated, and a bad one is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrecall.config import SettingsError, load_settings


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("GRAPHRECALL_PORT", "abc", "GRAPHRECALL_PORT: Input should be a valid integer"),
        ("GRAPHRECALL_PORT", "70000", "GRAPHRECALL_PORT: Input should be less than or equal"),
        ("GRAPHRECALL_WORKER_THREADS", "-3", "GRAPHRECALL_WORKER_THREADS: Input should be"),
        ("GRAPHRECALL_EMBED_THREADS", "0", "GRAPHRECALL_EMBED_THREADS: Input should be"),
        ("GRAPHRECALL_TASK_LEASE_SECONDS", "0.5", "GRAPHRECALL_TASK_LEASE_SECONDS"),
        ("GRAPHRECALL_LLM_CONCURRENCY", "0", "GRAPHRECALL_LLM_CONCURRENCY"),
        ("GRAPHRECALL_EMBEDDER", "bert", "GRAPHRECALL_EMBEDDER: Input should be 'chat'"),
        ("GRAPHRECALL_LOG_LEVEL", "loud", "GRAPHRECALL_LOG_LEVEL"),
        ("GRAPHRECALL_DEBUG", "maybe", "GRAPHRECALL_DEBUG"),
        ("GRAPHRECALL_SPACE", "Not-A-Slug", "GRAPHRECALL_SPACE: must be 12 lowercase"),
        ("GRAPHRECALL_API_KEY", "x", "GRAPHRECALL_API_KEY: String should have at least 16"),
    ],
)
def test_a_bad_variable_is_named_with_what_it_accepts(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert expected in str(raised.value)


def test_a_short_api_key_is_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRECALL_API_KEY", "secret-ish")
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert "secret-ish" not in str(raised.value)


def test_the_llm_extractor_needs_its_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRECALL_EXTRACTOR", "llm")
    with pytest.raises(SettingsError, match="GRAPHRECALL_EXTRACTOR=llm needs GRAPHRECALL_LLM"):
        load_settings()
    monkeypatch.setenv("GRAPHRECALL_LLM_BASE_URL", "http://localhost:11434/v1")
    assert load_settings().extractor == "llm"


def test_a_command_line_value_is_named_as_its_option() -> None:
    with pytest.raises(SettingsError, match="--port: Input should be greater than or equal"):
        load_settings(port=0)


def test_values_are_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in {
        "PORT": "9001",
        "WORKER_THREADS": "3",
        "EMBED_THREADS": "2",
        "MODEL_CACHE": str(tmp_path),
        "LOG_LEVEL": "WARNING",
        "DEBUG": "1",
        "API_KEY": "k" * 16,
    }.items():
        monkeypatch.setenv(f"GRAPHRECALL_{name}", value)
    settings = load_settings()
    assert (settings.port, settings.worker_threads, settings.embed_threads) == (9001, 3, 2)
    assert settings.model_cache == tmp_path and settings.log_level == "warning"
    assert settings.debug and settings.api_key == "k" * 16
