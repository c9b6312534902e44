"""The rerankers' registry: one place that the API, the CLI, each scope and the docs
read their names from."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrecall.cli import build_parser
from graphrecall.domain.scopes import SCOPES
from graphrecall.retrieval import rerank
from graphrecall.retrieval.engine import InvalidRequest, SearchOptions, validate
from graphrecall.wire.zep_v4.bodies import SearchBody

DOCS = Path(__file__).resolve().parents[2] / "docs" / "search.md"


def test_the_api_accepts_exactly_the_registry() -> None:
    schema = SearchBody.model_json_schema()["properties"]["reranker"]
    assert tuple(schema["enum"]) == rerank.NAMES
    for name in rerank.NAMES:
        assert SearchBody(query="x", reranker=name).reranker == name
    with pytest.raises(ValueError, match="reranker"):
        SearchBody(query="x", reranker="no_such_reranker")


def test_the_cli_offers_exactly_the_registry() -> None:
    search = next(
        child
        for action in build_parser()._actions
        if hasattr(action, "choices") and isinstance(action.choices, dict)
        for name, child in action.choices.items()
        if name == "search"
    )
    (option,) = [a for a in search._actions if "--reranker" in a.option_strings]
    assert tuple(option.choices or ()) == rerank.NAMES


def test_the_docs_list_every_reranker() -> None:
    text = DOCS.read_text()
    missing = [name for name in rerank.NAMES if f"   - `{name}`" not in text]
    assert not missing, missing


@pytest.mark.parametrize("scope", sorted(SCOPES))
def test_each_scope_accepts_what_the_registry_says(scope: str) -> None:
    spec = SCOPES[scope]
    for name, reranker in rerank.REGISTRY.items():
        asked = SearchOptions(
            query="x",
            reranker=name,
            mmr_lambda=0.5,
            center_node_uuid="n",
            mention_episodes=("e",),
        )
        if scope in reranker.scopes:
            assert validate(spec, asked) is reranker
        else:
            with pytest.raises(InvalidRequest) as refused:
                validate(spec, asked)
            assert refused.value.param == "reranker"
    assert rerank.accepted_by("memories") == ("rrf",)
    assert set(rerank.accepted_by("edges")) == set(rerank.NAMES)


def test_a_missing_requirement_names_its_field() -> None:
    spec = SCOPES["edges"]
    for name, param in [
        ("mmr", "mmr_lambda"),
        ("node_distance", "center_node_uuid"),
        ("episode_mentions", "filters.episode_uuids"),
    ]:
        with pytest.raises(InvalidRequest) as refused:
            validate(spec, SearchOptions(query="x", reranker=name))
        assert refused.value.param == param
