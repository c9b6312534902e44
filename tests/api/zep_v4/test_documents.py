"""Documents through the SDK: episodes grouped by ``document_id``, a document's episodes
in order, document summaries built by ingestion and their filters; the error contract."""

from __future__ import annotations

import pytest
from zep_cloud import BatchItemInput, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.api.zep_v4.test_debug_logs import project_client
from tests.conftest import wait_for_task
from tests.inprocess import InProcess

CHUNKS = [
    "Acme Corp signed a supply contract with Globex in 2023.",
    "Globex is based in Springfield.",
    "The contract runs until 2026.",
]


def _add(zep: Zep, graph_uuid: str, data: str, document_id: str | None, page: int) -> str:
    result = zep.graph.episode.add(
        graph_uuid, data=data, document_id=document_id, metadata={"page": page}
    )
    assert result.task is not None and result.task.uuid_ is not None
    assert wait_for_task(zep, result.task.uuid_) == "succeeded"
    assert result.episode is not None and result.episode.document_id == document_id
    return str(result.episode.uuid_)


def test_a_documents_episodes_and_its_summary(zep: Zep) -> None:
    graph = zep.graph.create(name="documents")
    chunks = [_add(zep, graph.uuid_, text, "contract.pdf", i) for i, text in enumerate(CHUNKS)]
    memo = _add(zep, graph.uuid_, "Hello.", "memo.txt", 9)
    _add(zep, graph.uuid_, "Acme Corp hired Dana.", None, 0)

    listed = zep.graph.episode.list_for_document(graph.uuid_, "contract.pdf")
    assert [e.uuid_ for e in listed.items] == chunks  # in the order they were added
    assert all(e.document_id == "contract.pdf" and e.processed for e in listed.items)
    paged = zep.graph.episode.list_for_document(graph.uuid_, "contract.pdf", page_size=2)
    assert len(paged.items) == 2 and paged.has_next
    assert [e.uuid_ for e in paged] == chunks
    assert list(zep.graph.episode.list_for_document(graph.uuid_, "unknown.pdf")) == []
    # A batch item's document_id groups its episode with the others.
    batch = zep.batch.create()
    zep.batch.add_items(
        batch.uuid_,
        items=[
            BatchItemInput(
                type="graph_episode",
                graph_uuid=graph.uuid_,
                data="Payment is due within 30 days.",
                document_id="contract.pdf",
                metadata={"page": 3},
            )
        ],
    )
    processed = zep.batch.process(batch.uuid_)
    assert processed.task is not None and processed.task.uuid_ is not None
    assert wait_for_task(zep, processed.task.uuid_) == "succeeded"
    from_batch = zep.batch.list_items(batch.uuid_).items[0].episode_uuid
    chunks.append(str(from_batch))
    assert [e.uuid_ for e in zep.graph.episode.list_for_document(graph.uuid_, "contract.pdf")] == (
        chunks
    )
    # The SDK sends a document id into the path as it is: spaces, dots, slashes.
    spaced = _add(zep, graph.uuid_, "Notes of the call.", "call notes/v1.2", 0)
    assert [
        e.uuid_ for e in zep.graph.episode.list_for_document(graph.uuid_, "call notes/v1.2")
    ] == [spaced]

    summaries = {s.document_id: s for s in zep.graph.document_summary.list(graph.uuid_)}
    assert set(summaries) == {"contract.pdf", "memo.txt", "call notes/v1.2"}
    contract = summaries["contract.pdf"]
    assert contract.uuid_ and contract.created_at and contract.last_summarized_at
    assert contract.summary is not None and contract.summary.startswith("Document contract.pdf.")
    assert "Globex" in contract.summary  # built from the facts its chunks stated
    # A document that gave no fact is summarised by its opening.
    assert summaries["memo.txt"].summary == "Document memo.txt.\n- Hello."

    # Filters: the metadata of the document's episodes; created_at only; no properties.
    by_page = zep.graph.document_summary.list(
        graph.uuid_,
        filters={
            "metadata_filters": {
                "type": "and",
                "filters": [{"property_name": "page", "operator": "eq", "value": 9}],
            }
        },
    )
    assert [s.document_id for s in by_page] == ["memo.txt"]
    with pytest.raises(BadRequestError) as info:
        zep.graph.document_summary.list(
            graph.uuid_,
            filters={
                "date_filters": {
                    "any_of": [
                        {
                            "all_of": [
                                {
                                    "field": "valid_at",
                                    "operator": "gt",
                                    "value": "2020-01-01T00:00:00Z",
                                }
                            ]
                        }
                    ]
                }
            },
        )
    assert info.value.body.error.param == "filters.date_filters.any_of[0].all_of[0].field"
    with pytest.raises(BadRequestError) as info:
        zep.graph.document_summary.list(
            graph.uuid_,
            filters={"property_filters": [{"property_name": "x", "operator": "is_null"}]},
        )
    assert info.value.body.error.code == "unsupported_filter"
    assert info.value.body.error.param == "filters.property_filters"

    # A clone copies the summaries; deleting a document's last episode drops its summary.
    cloned = zep.graph.clone(graph.uuid_, request={})
    assert cloned.task is not None and cloned.task.uuid_ is not None
    assert wait_for_task(zep, cloned.task.uuid_) == "succeeded"
    copied = {s.document_id: s.summary for s in zep.graph.document_summary.list(cloned.graph.uuid_)}
    assert copied == {k: s.summary for k, s in summaries.items()}
    assert len(list(zep.graph.episode.list_for_document(cloned.graph.uuid_, "contract.pdf"))) == 4
    zep.graph.episode.delete(graph.uuid_, memo)
    remaining = {s.document_id for s in zep.graph.document_summary.list(graph.uuid_)}
    assert remaining == {"contract.pdf", "call notes/v1.2"}
    zep.graph.episode.delete(graph.uuid_, chunks[0])
    assert "contract.pdf" in {s.document_id for s in zep.graph.document_summary.list(graph.uuid_)}


def test_documents_stay_in_their_project(server: InProcess, zep: Zep) -> None:
    other = project_client(server, "documents-other")
    graph = zep.graph.create(name="private-docs")
    _add(zep, graph.uuid_, "Initech makes staplers.", "secret.pdf", 0)
    with pytest.raises(NotFoundError):
        list(other.graph.episode.list_for_document(graph.uuid_, "secret.pdf"))
    with pytest.raises(NotFoundError):
        list(other.graph.document_summary.list(graph.uuid_))
    with pytest.raises(BadRequestError) as info:
        zep.graph.document_summary.list(graph.uuid_, order_by="summary")
    assert info.value.body.error.param == "order_by"
