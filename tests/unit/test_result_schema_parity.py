"""One result schema: REST's response models and MCP's output schemas are the same classes
(``service.results``/``service.reading.results``), and the hand-written protos carry every field
of them (under the few names protobuf spells differently, listed here)."""

from __future__ import annotations

from typing import Any, get_origin, get_type_hints

import pytest
from pydantic import BaseModel

from ameide_proto.v1 import common_pb2 as c
from ameide_proto.v1 import governance_pb2 as g
from ameide_proto.v1 import knowledge_pb2 as k
from ameide_proto.v1 import projection_pb2 as p
from service import results as r
from service.app import operations, use_case
from service.reading import results as rr

# result model → (proto message, {result field: proto field} where protobuf renames one)
PAIRS: dict[type[BaseModel], tuple[type, dict[str, str]]] = {
    r.Element: (c.Element, {}),
    r.Version: (c.Version, {}),
    r.Provenance: (c.Provenance, {}),
    r.Erasure: (c.Erasure, {}),
    r.Relationship: (c.Relationship, {}),
    # rebase's extras travel in RebaseProposalResponse beside the proposal
    r.Proposal: (g.Proposal, {"rebased_from_view": "-", "version": "-"}),
    r.TargetSelector: (g.TargetSelector, {}),
    r.Pin: (g.Pin, {}),
    r.Baseline: (g.Baseline, {}),
    r.BaselineRow: (g.BaselineSummary, {}),
    r.PointerMove: (g.PointerMove, {"from": "from_baseline_id", "to": "to_baseline_id"}),
    r.Published: (g.GetPublishedResponse, {}),
    r.AuditEvent: (g.AuditEvent, {}),
    r.AccessRow: (g.AccessLogEntry, {}),
    r.AuditVerdict: (g.VerifyAuditResponse, {}),
    r.Repository: (g.Repository, {}),
    r.TokenMade: (g.Token, {}),
    r.TokenRow: (g.TokenInfo, {}),
    r.TokenRevoked: (g.RevokeTokenResponse, {}),
    r.LegalHold: (g.LegalHold, {}),
    r.GrantRow: (g.RoleGrant, {}),
    r.GrantRevoked: (g.RevokeRoleResponse, {}),
    r.BaselineDiff: (p.BaselineDiff, {}),
    r.DiffEntry: (p.DiffEntry, {"from": "from_side", "to": "to_side"}),
    r.DiffSide: (p.DiffSide, {}),
    r.ElementWithVersion: (k.GetElementResponse, {}),
    r.ElementHistory: (k.GetElementHistoryResponse, {}),
    rr.ScopeEcho: (p.Scope, {}),
    rr.SelectorUsed: (p.SelectorUsed, {}),
    rr.Excerpt: (p.Excerpt, {}),
    rr.Citation: (p.Citation, {}),
    rr.ContextItem: (p.ContextItem, {}),
    rr.ReadContext: (p.ReadContextResponse, {}),
    rr.CitationVerdict: (p.CitationVerdict, {}),
    rr.CitationsVerified: (p.VerifyCitationsResponse, {}),
    rr.Replay: (p.ReplayResponse, {}),
    rr.Chunk: (k.Chunk, {}),
    rr.VersionWithChunks: (k.GetVersionResponse, {}),
    # a neighbourhood node is never read "as of" an element's retirement
    rr.Node: (k.NeighborhoodNode, {"retired_at_as_of": "-"}),
    rr.Edge: (k.NeighborhoodEdge, {}),
    rr.Neighborhood: (k.ExpandNeighborhoodResponse, {}),
}

# proto fields another result fills: one RoleGrant message answers both "grant made" (granted_at)
# and "grants listed" (created_at)
PROTO_SHARED = {g.RoleGrant: {"granted_at"}}


@pytest.mark.parametrize("model", list(PAIRS), ids=lambda m: m.__name__)
def test_the_proto_carries_every_field_of_the_result(model: type[BaseModel]) -> None:
    message, renamed = PAIRS[model]
    proto = {f.name for f in message.DESCRIPTOR.fields}  # type: ignore[attr-defined]
    wanted = {renamed.get(f.alias or n, f.alias or n) for n, f in model.model_fields.items()}
    assert wanted - {"-"} - proto == set()
    unexplained = proto - wanted - PROTO_SHARED.get(message, set())
    assert unexplained == set(), "a proto field the result model does not describe"


def test_mcp_tools_answer_with_their_operations_result_model() -> None:
    from mcp_adapter.tools import TOOLS

    outputs = {spec.name: spec.output for spec in TOOLS}
    for tool, operation in MCP_TOOLS.items():
        assert outputs[tool] is _returned(operation), tool


# -- one model per answer: the service's return type is REST's response model and MCP's
#    outputSchema (issue 29) ------------------------------------------------------------------

# MCP tool → the service operation behind it (REST's operation_id is the operation's name)
MCP_TOOLS = {
    "memory.get_context": "read_context",
    "memory.search": "read_context",
    "memory.explain": "read_context",
    "memory.get_element": "get_element",
    "memory.expand": "expand",
    "memory.history": "element_history",
    "memory.verify_citations": "verify_citations",
    "memory.propose": "propose",
}

# REST answers a page's rows and puts its cursors in headers
REST_ROWS = {"proposal_list": "proposal_page", "history": "history_page"}
REST_MODULES = (
    "admin",
    "audit",
    "curation",
    "knowledge",
    "publishing",
    "read",
)


def _inline(schema: Any, defs: dict[str, Any], prefix: str) -> Any:
    """``schema`` with every ``$ref`` replaced by its definition, and without the null defaults
    FastAPI leaves out of OpenAPI (they say nothing a nullable, optional field does not)."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(defs[schema["$ref"].removeprefix(prefix)], defs, prefix)
        return {
            key: _inline(value, defs, prefix)
            for key, value in schema.items()
            if key != "$defs" and not (key == "default" and value is None)
        }
    if isinstance(schema, list):
        return [_inline(value, defs, prefix) for value in schema]
    return schema


def _model_schema(model: type[BaseModel]) -> Any:
    schema = model.model_json_schema(mode="serialization")
    return _inline(schema, schema.get("$defs", {}), "#/$defs/")


# REST's and MCP's operation ids are the use cases' names; the token registry's carry its noun
FLAT = {name.split(".")[1]: name for name in operations() if not name.startswith("tokens.")} | {
    "create_token": "tokens.create",
    "revoke_token": "tokens.revoke",
    "list_tokens": "tokens.list_tokens",
}


def _returned(operation: str) -> Any:
    return get_type_hints(use_case(FLAT[operation]))["return"]


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    from server.rest.app import create_app
    from service.settings import Settings

    app = create_app(None, settings=Settings())  # type: ignore[arg-type]  # documents only
    return app.openapi()


def _rest_schema(openapi: dict[str, Any], operation_id: str) -> Any:
    for methods in openapi["paths"].values():
        for op in methods.values():
            if op.get("operationId") == operation_id:
                ok = op["responses"].get("200") or op["responses"].get("201")
                schema = ok["content"]["application/json"]["schema"]
                components = openapi["components"]["schemas"]
                return _inline(schema, components, "#/components/schemas/")
    raise AssertionError(f"no REST operation {operation_id}")


@pytest.mark.parametrize(("tool", "operation"), MCP_TOOLS.items())
def test_openapi_mcp_and_the_model_give_one_schema(
    tool: str, operation: str, openapi: dict[str, Any]
) -> None:
    from mcp_adapter.server import MemoryMcp

    model = _returned(operation)
    listed = {t.name: t for t in MemoryMcp(None, lambda _: None).listed}  # type: ignore[arg-type]
    mcp = listed[tool].output_schema
    assert mcp is not None
    assert _inline(mcp, mcp.get("$defs", {}), "#/$defs/") == _model_schema(model)
    assert _rest_schema(openapi, operation) == _model_schema(model)


def test_every_rest_response_model_is_the_operations_return_type() -> None:
    import importlib

    from fastapi.routing import APIRoute

    names = set(FLAT)
    checked = 0
    for module in REST_MODULES:
        for route in importlib.import_module(f"server.rest.{module}").router.routes:
            if not isinstance(route, APIRoute) or route.operation_id not in names:
                continue
            returned = _returned(REST_ROWS.get(route.operation_id, route.operation_id))
            if route.operation_id in REST_ROWS:  # the page's rows: its one list field
                rows = [f.annotation for f in returned.model_fields.values()]
                returned = next(a for a in rows if get_origin(a) is list)
            assert route.response_model == returned, route.operation_id
            checked += 1
    assert checked >= 45  # the rule has teeth: most operations are on REST
