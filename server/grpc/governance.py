"""GovernanceService: proposals, baselines, promotion, history, audit and administration.

Each RPC parses its request, calls one ``MemoryService`` method as the authenticated caller and
maps the result back; authorization, validation and every rule live in the service.
"""

# ruff: noqa: N802 - RPC method names are the .proto's (CamelCase)

from __future__ import annotations

from typing import Any

from ameide_proto.v1 import governance_pb2 as pb
from ameide_proto.v1 import governance_pb2_grpc as rpc
from domain.errors import InvalidArgument
from edge.results import as_json
from server.grpc.calls import current_caller
from server.grpc.convert import instant, opt, present, struct, to_message
from service.app import MemoryService
from service.governance.queue import MAX_LIMIT, QueueFilter

_PROPOSE_OPTIONAL = (
    "title",
    "element_id",
    "target_version_id",
    "change_kind",
    "client_request_id",
    "type_key",
    "element_kind",
    "classification",
)


def _selector(request: pb.ProposeRequest) -> dict[str, Any]:
    if not request.HasField("target_selector"):
        return {}
    sel = request.target_selector
    return {"selector": sel.kind, "baseline_id": opt(sel, "baseline_id")}


def _pins(request: pb.CreateBaselineRequest) -> dict[str, str] | None:
    """Explicit pins, or None for "every canonical element at its head"."""
    pins: dict[str, str] = {}
    for pin in request.pins:
        if pin.element_id in pins:
            raise InvalidArgument(f"pins name element {pin.element_id} twice", field="pins")
        pins[pin.element_id] = pin.version_id
    return pins or None


class GovernanceServicer(rpc.GovernanceServiceServicer):
    """The governance RPCs over one service instance."""

    def __init__(self, service: MemoryService) -> None:
        self._svc = service

    # -- proposals -------------------------------------------------------------------------
    def Propose(self, request: pb.ProposeRequest, _: Any) -> pb.Proposal:
        out = self._svc.curation.propose(
            current_caller(),
            request.repository_id,
            body=request.body,
            summary=request.summary,
            metadata=struct(request, "metadata"),
            **present(request, *_PROPOSE_OPTIONAL),
            **_selector(request),
        )
        return to_message(pb.Proposal, out)

    def ListProposals(self, request: pb.ListProposalsRequest, _: Any) -> pb.ListProposalsResponse:
        size = opt(request, "page_size")
        if size is not None and not 1 <= size <= MAX_LIMIT:
            raise InvalidArgument(f"page_size must be 1-{MAX_LIMIT}", field="page_size")
        queue = QueueFilter(
            element_id=opt(request, "element_id"),
            proposer=opt(request, "proposer"),
            stale=opt(request, "stale"),
            conflicts=opt(request, "conflicts"),
            since=instant(request, "since"),
            limit=size,
            cursor=opt(request, "page_token") or None,
            newest_first=bool(opt(request, "newest_first")),
        )
        out = self._svc.curation.proposal_page(
            current_caller(), request.repository_id, opt(request, "status"), queue
        )
        return to_message(
            pb.ListProposalsResponse,
            {"proposals": as_json(out.proposals), "next_page_token": out.next_cursor or ""},
        )

    def GetProposal(self, request: pb.GetProposalRequest, _: Any) -> pb.Proposal:
        return to_message(
            pb.Proposal, self._svc.curation.proposal_show(current_caller(), request.proposal_id)
        )

    def ReviseProposal(self, request: pb.ReviseProposalRequest, _: Any) -> pb.Proposal:
        out = self._svc.curation.revise(
            current_caller(),
            request.proposal_id,
            request.body,
            opt(request, "summary"),
            opt(request, "title"),
        )
        return to_message(pb.Proposal, out)

    def AcceptProposal(self, request: pb.AcceptProposalRequest, _: Any) -> pb.Proposal:
        out = self._svc.review.accept(
            current_caller(),
            request.proposal_id,
            opt(request, "rationale"),
            opt(request, "expected_version_id"),
        )
        return to_message(pb.Proposal, out)

    def RejectProposal(self, request: pb.RejectProposalRequest, _: Any) -> pb.Proposal:
        out = self._svc.review.reject(current_caller(), request.proposal_id, request.rationale)
        return to_message(pb.Proposal, out)

    def RebaseProposal(
        self, request: pb.RebaseProposalRequest, _: Any
    ) -> pb.RebaseProposalResponse:
        out = as_json(self._svc.review.rebase(current_caller(), request.proposal_id))
        previous, version = out.pop("rebased_from_view"), out.pop("version")
        return to_message(
            pb.RebaseProposalResponse, {"proposal": out, "previous": previous, "version": version}
        )

    def WithdrawProposal(self, request: pb.WithdrawProposalRequest, _: Any) -> pb.Proposal:
        out = self._svc.review.withdraw(
            current_caller(), request.proposal_id, opt(request, "rationale")
        )
        return to_message(pb.Proposal, out)

    # -- baselines and the published pointer -----------------------------------------------
    def CreateBaseline(self, request: pb.CreateBaselineRequest, _: Any) -> pb.Baseline:
        out = self._svc.publishing.create_baseline(
            current_caller(), request.repository_id, opt(request, "name"), _pins(request)
        )
        return to_message(pb.Baseline, out)

    def GetBaseline(self, request: pb.GetBaselineRequest, _: Any) -> pb.Baseline:
        return to_message(
            pb.Baseline, self._svc.publishing.baseline_show(current_caller(), request.baseline_id)
        )

    def ListBaselines(self, request: pb.ListBaselinesRequest, _: Any) -> pb.ListBaselinesResponse:
        out = self._svc.publishing.list_baselines(current_caller(), request.repository_id)
        return to_message(pb.ListBaselinesResponse, {"baselines": out})

    def Promote(self, request: pb.PromoteRequest, _: Any) -> pb.PointerMove:
        out = self._svc.publishing.promote(
            current_caller(),
            request.baseline_id,
            opt(request, "repository_id"),
            opt(request, "reason"),
            opt(request, "expected_baseline_id"),
        )
        return to_message(pb.PointerMove, out)

    def Rollback(self, request: pb.RollbackRequest, _: Any) -> pb.PointerMove:
        out = self._svc.publishing.rollback(
            current_caller(),
            request.repository_id,
            opt(request, "to_baseline_id"),
            opt(request, "reason"),
        )
        return to_message(pb.PointerMove, out)

    def GetPublished(self, request: pb.GetPublishedRequest, _: Any) -> pb.GetPublishedResponse:
        out = self._svc.publishing.published(
            current_caller(), request.repository_id, instant(request, "as_of")
        )
        return to_message(pb.GetPublishedResponse, out)

    # -- history and audit -----------------------------------------------------------------
    def GetHistory(self, request: pb.GetHistoryRequest, _: Any) -> pb.GetHistoryResponse:
        out = self._svc.history.history_page(
            current_caller(),
            request.repository_id,
            since=instant(request, "since"),
            until=instant(request, "until"),
            element_id=opt(request, "element_id"),
            actor=opt(request, "actor"),
            before=opt(request, "before"),
            after=opt(request, "after"),
            **present(request, "limit"),
        )
        return to_message(pb.GetHistoryResponse, out)

    def GetAccessLog(self, request: pb.GetAccessLogRequest, _: Any) -> pb.GetAccessLogResponse:
        out = self._svc.history.access_log(
            current_caller(), request.repository_id, **present(request, "limit")
        )
        return to_message(pb.GetAccessLogResponse, {"entries": out})

    def VerifyAudit(self, request: pb.VerifyAuditRequest, _: Any) -> pb.VerifyAuditResponse:
        out = self._svc.history.verify_audit(current_caller(), opt(request, "repository_id"))
        return to_message(pb.VerifyAuditResponse, out)

    # -- administration --------------------------------------------------------------------
    def CreateRepository(self, request: pb.CreateRepositoryRequest, _: Any) -> pb.Repository:
        out = self._svc.admin.create_repository(current_caller(), request.repository_id)
        return to_message(pb.Repository, out)

    def GrantRole(self, request: pb.GrantRoleRequest, _: Any) -> pb.RoleGrant:
        out = self._svc.admin.grant(
            current_caller(),
            request.principal_id,
            request.role,
            request.scope,
            opt(request, "clearance"),
            opt(request, "on_behalf_of"),
        )
        return to_message(pb.RoleGrant, out)

    def RevokeRole(self, request: pb.RevokeRoleRequest, _: Any) -> pb.RevokeRoleResponse:
        out = self._svc.admin.revoke(
            current_caller(),
            request.principal_id,
            request.role,
            request.scope,
            opt(request, "on_behalf_of"),
        )
        return to_message(pb.RevokeRoleResponse, out)

    def ListGrants(self, request: pb.ListGrantsRequest, _: Any) -> pb.ListGrantsResponse:
        out = self._svc.admin.list_grants(current_caller(), request.scope)
        return to_message(pb.ListGrantsResponse, {"grants": out})

    def CreateToken(self, request: pb.CreateTokenRequest, _: Any) -> pb.Token:
        return to_message(pb.Token, self._svc.tokens.create(current_caller(), request.principal_id))

    def ListTokens(self, request: pb.ListTokensRequest, _: Any) -> pb.ListTokensResponse:
        principal = opt(request, "principal_id")
        out = self._svc.tokens.list_tokens(current_caller(), principal)
        return to_message(pb.ListTokensResponse, {"tokens": out})

    def RevokeToken(self, request: pb.RevokeTokenRequest, _: Any) -> pb.RevokeTokenResponse:
        out = self._svc.tokens.revoke(current_caller(), request.token_id)
        return to_message(pb.RevokeTokenResponse, out)

    def SetLegalHold(self, request: pb.SetLegalHoldRequest, _: Any) -> pb.LegalHold:
        out = self._svc.admin.set_legal_hold(current_caller(), request.repository_id, request.held)
        return to_message(pb.LegalHold, out)
