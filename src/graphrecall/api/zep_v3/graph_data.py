"""v3's direct graph writes: ``/graph/add-fact-triple``, ``/graph/nodes`` and
``/graph/clone`` (v4's edge add, node add and clone, on the graphs v3 names)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.payloads import CloneV3, FactTripleV3, NodesAddV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.inputs import EdgesAdd, NodesAdd
from graphrecall.services.graph import edges, graphs, nodes
from graphrecall.wire.errors import param_path
from graphrecall.wire.zep_v4 import wire as v4

router = make_router("zep v3: graph data")
# A v4 field of the one edge -> the v3 field it came from, for error messages.
V3_FIELDS = {
    "fact": "fact",
    "fact_name": "fact_name",
    "source_node": "source_node_name",
    "target_node": "target_node_name",
    "attributes": "edge_attributes",
}


def _edges_add(body: FactTripleV3) -> EdgesAdd:
    try:
        return EdgesAdd.model_validate(body.as_v4())
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        field = loc[2] if len(loc) > 2 else "fact"
        param = V3_FIELDS.get(str(field), param_path(loc[2:]) or "fact")
        raise BadRequest(f"{param}: {error['msg']}", param=param) from None


@router.post("/graph/add-fact-triple", response_model=v3wire.FactTripleV3)
def add_fact_triple(
    body: FactTripleV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    graph = ids.target_graph(ctx, project, body.user_id, body.graph_id)
    added, task = edges.add_edges(ctx, project, graph.uuid, _edges_add(body))
    edge, source, target = added[0]
    source_view, target_view = nodes.views(ctx, [source, target])
    return v3wire.FactTripleV3(
        edge=v3wire.edge(v4.edge(nodes.edge_views(ctx, [edge])[0], graph)),
        source_node=v3wire.node(v4.node(source_view, graph)),
        target_node=v3wire.node(v4.node(target_view, graph)),
        task_id=task.uuid,
    )


@router.post("/graph/nodes", response_model=v3wire.AddNodesV3)
def add_nodes(body: NodesAddV3, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    graph = ids.target_graph(ctx, project, body.user_id, body.graph_id)
    request = NodesAdd(nodes=body.nodes)
    added, task = nodes.add_nodes(ctx, project, graph.uuid, request)
    return v3wire.AddNodesV3(nodes=[v4.added_node(n) for n in added], task_id=task.uuid)


@router.post("/graph/clone", response_model=v3wire.CloneV3)
def clone(body: CloneV3, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """A copy of a user's or a graph's graph as a new graph named ``target_graph_id``.
    v3's ``target_user_id`` (a new user owning the copy) is not built: v4's clone makes
    a standard graph, never a user."""
    if body.source_user_id and body.source_graph_id:
        raise BadRequest(
            "give source_user_id or source_graph_id, not both", param="source_graph_id"
        )
    if body.source_user_id:
        owner = ids.user(ctx, project, body.source_user_id, param="source_user_id")
        source = graphs.resolve(ctx, project, owner.graph_uuid)
    elif body.source_graph_id:
        source = ids.graph(ctx, project, body.source_graph_id, param="source_graph_id")
    else:
        raise BadRequest("give source_user_id or source_graph_id", param="source_graph_id")
    if body.target_user_id:
        raise BadRequest(
            "cloning into a new user is not built; give target_graph_id", param="target_user_id"
        )
    if not body.target_graph_id:
        raise BadRequest("give target_graph_id", param="target_graph_id")
    graph, task = graphs.clone_graph(ctx, project, source.uuid, body.target_graph_id)
    return v3wire.CloneV3(graph_id=graph.graph_id, task_id=task.uuid)
