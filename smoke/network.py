"""Phase 2: the scenario over the network, the way remote clients reach a server.

Administration, curation and publishing go through gRPC (``smoke.grpc_client``); the agent
reads, proposes and checks citations through MCP (``smoke.mcp_client``) — and every read, every
refused call and every citation check is made through both, so the two surfaces are held to the
same answers. The agent's proposal goes through MCP, the competing one through gRPC.

Ingest has no network surface: against the embedded instance the backlog is mirrored through
the service; against ``--target`` the ingest step is skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smoke.content import ADMIN, AGENT, GRANTS, PRINCIPALS
from smoke.grpc_client import GrpcClient
from smoke.mcp_client import McpClients
from smoke.runner import StepFailed, expect
from smoke.surface import Read, SurfaceError


class NetworkSurface:
    """gRPC + MCP against one server, with a bearer token per principal."""

    label = "gRPC + MCP"
    readers: tuple[str, ...] = ("mcp", "grpc")
    proposers: tuple[str, ...] = ("mcp", "grpc")

    def __init__(
        self, grpc_target: str, mcp_url: str, admin_token: str, instance: Any = None
    ) -> None:
        self.tokens: dict[str, str] = {ADMIN: admin_token}
        self.grpc = GrpcClient(grpc_target, self.tokens)
        self.mcp = McpClients(mcp_url, self.tokens)
        self.instance = instance  # smoke.embedded.EmbeddedInstance, or None for --target
        self.minted: list[str] = []

    # -- administration --------------------------------------------------------------------
    def connect(self) -> str:
        """Both surfaces answer, and the administrator's token is a global admin's."""
        try:  # ListGrants on "*" needs a global admin, which --target's token must be
            self.grpc.call("governance", "ListGrants", ADMIN, scope="*")
        except SurfaceError as exc:
            raise StepFailed(f"gRPC {self.grpc.target}: {exc}") from None
        health = self.mcp.call(ADMIN, "memory.health", {})
        return f"gRPC {self.grpc.target} and MCP {self.mcp.url} answer {health.get('principal')}"

    def setup(self, repo: str) -> str:
        """Create the repository, grant the cast their roles and mint their tokens (gRPC)."""
        self.grpc.call("governance", "CreateRepository", ADMIN, repository_id=repo)
        for principal, role in GRANTS:
            self.grpc.call(
                "governance", "GrantRole", ADMIN, principal_id=principal, role=role, scope=repo
            )
        for principal in PRINCIPALS:
            token = self.grpc.call("governance", "CreateToken", ADMIN, principal_id=principal)
            self.tokens[principal] = token["token"]
            self.minted.append(token["token_id"])
        return f"repository {repo}, {len(GRANTS)} grants, {len(self.minted)} tokens via gRPC"

    def revoke_tokens(self) -> None:
        """Revoke the tokens this run minted (a running server keeps its other tokens)."""
        while self.minted:
            self.grpc.call("governance", "RevokeToken", ADMIN, token_id=self.minted.pop())

    def ingest(self, repo: str, source: Path) -> dict[str, Any] | None:
        """Only the embedded instance can ingest (no network surface offers it)."""
        if self.instance is None:
            return None
        report: dict[str, Any] = self.instance.ingest(repo, source)
        return report

    def sync_and_drift(self, repo: str, source: Path, page_id: str) -> str | None:
        """Only the embedded instance registers sources (they are local-only, like ingest)."""
        if self.instance is None:
            return None
        return str(self.instance.sync_and_drift(repo, source, page_id))

    def check_index(self) -> str:
        """``memory.health`` says ok (and the embedded index directory is still there)."""
        local = self.instance.check_index() if self.instance is not None else None
        health = self.mcp.call(AGENT, "memory.health", {})
        index = health.get("index") or {}
        expect(
            health.get("status") == "ok",
            f"memory.health reports {health.get('status')}: {index.get('indexed_versions')} of "
            f"{index.get('expected_versions')} versions indexed, {index.get('pending')} pending",
        )
        return local or f"memory.health ok ({index.get('indexed_versions')} versions)"

    # -- curation and publishing (gRPC) ----------------------------------------------------
    def create_element(
        self, who: str, repo: str, title: str, body: str, type_key: str
    ) -> dict[str, Any]:
        """CreateElement."""
        return self.grpc.call(
            "knowledge",
            "CreateElement",
            who,
            repository_id=repo,
            title=title,
            body=body,
            type_key=type_key,
        )

    def create_baseline(self, who: str, repo: str, name: str) -> dict[str, Any]:
        """CreateBaseline."""
        return self.grpc.call("governance", "CreateBaseline", who, repository_id=repo, name=name)

    def promote(self, who: str, baseline_id: str, repo: str, reason: str) -> dict[str, Any]:
        """Promote."""
        return self.grpc.call(
            "governance",
            "Promote",
            who,
            baseline_id=baseline_id,
            repository_id=repo,
            reason=reason,
        )

    def published(self, who: str, repo: str, as_of: str | None = None) -> dict[str, Any]:
        """GetPublished."""
        return self.grpc.call("governance", "GetPublished", who, repository_id=repo, as_of=as_of)

    def proposal_show(
        self, who: str, proposal_id: str, on_behalf_of: str | None = None
    ) -> dict[str, Any]:
        """GetProposal (``x-ameide-on-behalf-of`` when acting for someone)."""
        return self.grpc.call(
            "governance", "GetProposal", who, on_behalf_of, proposal_id=proposal_id
        )

    def accept(self, who: str, proposal_id: str, rationale: str) -> dict[str, Any]:
        """AcceptProposal."""
        return self.grpc.call(
            "governance", "AcceptProposal", who, proposal_id=proposal_id, rationale=rationale
        )

    def rebase(self, who: str, proposal_id: str) -> dict[str, Any]:
        """RebaseProposal; the new proposal."""
        out = self.grpc.call("governance", "RebaseProposal", who, proposal_id=proposal_id)
        proposal: dict[str, Any] = out["proposal"]
        return proposal

    # -- the agent's side (MCP, and gRPC alongside) ----------------------------------------
    def read_context(self, who: str, read: Read, via: str) -> dict[str, Any]:
        """memory.get_context, or GetReadContext."""
        if via == "grpc":
            return self.grpc.call("projection", "GetReadContext", who, **read.request())
        return self.mcp.call(
            who,
            "memory.get_context",
            {
                "repository": read.repo,
                "query": read.query,
                "selector": read.selector,
                "as_of": read.as_of,
                "max_items": read.max_items,
            },
        )

    def version_body(self, who: str, element_id: str, version_id: str, via: str) -> str:
        """memory.get_element, or GetElement, of one version."""
        if via == "grpc":
            got = self.grpc.call(
                "knowledge", "GetElement", who, element_id=element_id, version_id=version_id
            )
        else:
            got = self.mcp.call(
                who, "memory.get_element", {"element_id": element_id, "version_id": version_id}
            )
        body = (got.get("version") or {}).get("body")
        if not isinstance(body, str):
            raise SurfaceError("MALFORMED", f"version {version_id} came back without a body")
        return body

    def propose(
        self,
        who: str,
        repo: str,
        element_id: str,
        target_version_id: str,
        body: str,
        summary: str,
        via: str,
    ) -> dict[str, Any]:
        """memory.propose, or Propose."""
        args = {
            "element_id": element_id,
            "target_version_id": target_version_id,
            "body": body,
            "summary": summary,
        }
        if via == "grpc":
            return self.grpc.call("governance", "Propose", who, repository_id=repo, **args)
        return self.mcp.call(who, "memory.propose", {"repository": repo, **args})

    def verify_citations(
        self, who: str, context_id: str, citations: list[dict[str, Any]], via: str
    ) -> dict[str, Any]:
        """memory.verify_citations, or VerifyCitations."""
        if via == "grpc":
            return self.grpc.call(
                "projection", "VerifyCitations", who, context_id=context_id, citations=citations
            )
        return self.mcp.call(
            who, "memory.verify_citations", {"context_id": context_id, "citations": citations}
        )

    def close(self) -> None:
        """Close both clients."""
        try:
            self.mcp.close()
        finally:
            self.grpc.close()
