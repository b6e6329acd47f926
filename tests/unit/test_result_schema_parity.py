"""One result schema: REST's response models and MCP's output schemas are the same classes
(``service.results``/``service.results_read``), and the hand-written protos carry every field
of them (under the few names protobuf spells differently, listed here)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ameide_proto.v1 import common_pb2 as c
from ameide_proto.v1 import governance_pb2 as g
from ameide_proto.v1 import knowledge_pb2 as k
from ameide_proto.v1 import projection_pb2 as p
from mcp_adapter import outputs
from service import results as r
from service import results_read as rr

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


def test_mcp_outputs_are_the_service_result_models() -> None:
    assert outputs.Context is rr.ReadContext
    assert outputs.ElementResult is r.ElementWithVersion
    assert outputs.History is r.ElementHistory
    assert outputs.Neighborhood is rr.Neighborhood
    assert outputs.Verification is rr.CitationsVerified
    assert outputs.ProposalResult is r.Proposal
