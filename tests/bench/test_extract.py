"""``graphrecall bench extract`` runs, on a small data file, with the offline extractor
and with the LLM extractor against a local stand-in server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrecall.cli import main
from graphrecall_bench.extract_data import load, names_match
from tests.ml.test_llm import FakeLLM

DATA = """
== dana | user=Dana Reyes
@ 2024-03-14T09:00:00Z
Dana: Last Tuesday I moved to Lisbon.
  + Dana | move live | Lisbon | 2024-03-12
  x Assistant
Assistant: Lisbon is lovely.
json: {"name": "Dana Reyes", "employer": "Acme Corp", "role": "CTO"}
  + Dana Reyes | work employ | Acme Corp
  + Dana Reyes | role | CTO
= Dana | Lisbon
"""


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.txt"
    path.write_text(DATA, encoding="utf-8")
    return path


def test_the_packaged_data_and_the_matching_rules() -> None:
    cases = load()
    assert sum(len(c.items) for c in cases) >= 200
    assert any(i.is_json for c in cases for i in c.items)
    assert names_match("Kofi", "Kofi Mensah") and names_match("dog", "rescue dog")
    assert names_match("thesis", "Ana Silva's thesis") and names_match("a / Acme", "Acme")
    assert not names_match("Orbital Labs", "new job at Orbital Labs")


def test_bench_extract_offline(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "extract.json"
    assert main(["bench", "extract", "--data", str(data), "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["extractor"] == "offline-spacy"
    assert result["episodes"] == {"message": 2, "json": 1}
    assert result["overall"]["recall"] == 1.0 and result["overall"]["precision"] == 1.0
    assert result["messages"]["date_accuracy"] == 1.0
    assert result["duplicate_rate"] == 0.0 and result["overall"]["noise_rate"] == 0.0
    assert result["invalidation"]["still_live"] == 1.0


def test_bench_extract_llm_through_a_stand_in_server(data: Path, tmp_path: Path) -> None:
    # The stand-in answers every episode with one scripted extraction (Dana LIVES_IN
    # Lisbon): what is measured is that the LLM path runs and is scored alike.
    fake = FakeLLM()
    try:
        out = tmp_path / "llm.json"
        argv = ["bench", "extract", "--data", str(data), "--json", str(out)]
        assert main([*argv, "--llm-url", fake.url, "--llm-model", "stand-in"]) == 0
    finally:
        fake.httpd.shutdown()
    result = json.loads(out.read_text())
    assert result["extractor"].startswith("llm")
    assert fake.requests, "the LLM extractor was not called"
    assert result["json"]["recall"] == 1.0  # JSON records are read from their structure
    assert result["messages"]["edges"] >= 1
