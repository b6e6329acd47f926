"""One driver interface for the surface-parity scenario, and one driver per surface.

``ServiceDriver`` calls ``MemoryService`` in-process: it is the reference every surface is
compared with, and the base class of the surface drivers. A surface driver overrides every
step its surface offers; a step it does not override runs through the service in-process,
and ``bypassed()`` names those steps (derived from the code, so a driver cannot skip a surface
silently):

- ``CliDriver``: ``ameide … --json`` through Typer's ``CliRunner`` in-process on the world's
  database; every step.
- ``RestDriver``: real HTTP (uvicorn on a loopback port, ``httpx``) with a bearer token per
  principal; every step except ``ingest`` (REST has no ingest operation).
- ``GrpcDriver``: the generated stubs on a real channel to a server on a loopback port; every
  step except ``ingest`` (gRPC has no ingest RPC).
- ``McpDriver``: the official SDK client over Streamable HTTP (real socket) with a bearer token
  per principal; the steps with an MCP tool (read → ``memory.get_context``, propose,
  verify_citations, history, get_element). MCP publishes only the nine agent tools, so
  ``ingest``, ``create_element``, ``create_baseline``, ``promote``, ``show_proposal``,
  ``accept`` and ``rebase`` (curator / publisher / ingestor work) run through the service.

Every step returns the service's JSON shape (a ``dict``) or raises ``SurfaceError`` carrying
the taxonomy code (``domain/errors.py``) read from the structured error the surface returned.
Each driver also checks that its surface's own signal (exit code, HTTP status, gRPC status,
MCP text prefix) is the one documented for that code, so the structured code and the
transport never disagree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, ClassVar

import grpc
import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal
from google.protobuf import json_format
from google.protobuf.message import Message
from typer.testing import CliRunner

from ameide_proto.v1 import governance_pb2 as gov
from ameide_proto.v1 import knowledge_pb2 as kno
from ameide_proto.v1 import projection_pb2 as proj
from cli.main import app as cli_app
from domain.errors import AmeideError
from edge.results import as_json
from mcp_adapter.http import create_http_app
from server.rest.app import create_app
from service.authz import Caller
from tests.conftest import World
from tests.e2e.grpc_harness import GrpcClient, serve
from tests.e2e.mcp_harness import http_session
from tests.e2e.rest_harness import running

STEPS = (
    "ingest",
    "create_element",
    "create_baseline",
    "promote",
    "read_context",
    "propose",
    "show_proposal",
    "accept",
    "rebase",
    "verify_citations",
    "element_history",
    "get_element",
    "read_without_credentials",
)
"""Every step of the interface, in the order the scenario first uses them."""

# The documented signal of each taxonomy code on each surface (docs/architecture.md "Errors", the
# CLI exit-code table of docs/cli.md, server/rest/errors.py, server/grpc/errors.py).
CLI_EXIT = {
    "INVALID_ARGUMENT": 2,
    "NOT_FOUND": 3,
    "PERMISSION_DENIED": 4,
    "FAILED_PRECONDITION": 5,
    "STALE_PROPOSAL": 5,
    "PROPOSAL_HAS_CONFLICTS": 5,
    "LEGAL_HOLD": 5,
    "CONFLICT": 6,
    "ALREADY_EXISTS": 6,
    "UNAUTHENTICATED": 7,
}
HTTP_STATUS = {
    "INVALID_ARGUMENT": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "CONFLICT": 409,
    "FAILED_PRECONDITION": 412,
    "STALE_PROPOSAL": 412,
    "PROPOSAL_HAS_CONFLICTS": 412,
    "LEGAL_HOLD": 412,
}
GRPC_STATUS = {
    "INVALID_ARGUMENT": grpc.StatusCode.INVALID_ARGUMENT,
    "UNAUTHENTICATED": grpc.StatusCode.UNAUTHENTICATED,
    "PERMISSION_DENIED": grpc.StatusCode.PERMISSION_DENIED,
    "NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "ALREADY_EXISTS": grpc.StatusCode.ALREADY_EXISTS,
    "CONFLICT": grpc.StatusCode.ABORTED,
    "FAILED_PRECONDITION": grpc.StatusCode.FAILED_PRECONDITION,
    "STALE_PROPOSAL": grpc.StatusCode.FAILED_PRECONDITION,
    "PROPOSAL_HAS_CONFLICTS": grpc.StatusCode.FAILED_PRECONDITION,
    "LEGAL_HOLD": grpc.StatusCode.FAILED_PRECONDITION,
}


class SurfaceError(Exception):
    """A step failed: the taxonomy code, message and details the surface reported."""

    def __init__(self, surface: str, code: str, message: str, details: dict[str, Any]) -> None:
        super().__init__(f"{surface}: {code}: {message}")
        self.surface = surface
        self.code = code
        self.message = message
        self.details = details


def read_request(
    repository: str,
    *,
    query: str | None = None,
    selector: str = "published",
    baseline_id: str | None = None,
    element_ids: Sequence[str] = (),
    as_of: str | None = None,
    max_items: int | None = None,
) -> dict[str, Any]:
    """The docs/product.md §4 request (only the fields given), as REST and gRPC send it."""
    tenant, org, repo = repository.split("/")
    selector_block: dict[str, Any] = {"kind": selector}
    if baseline_id is not None:
        selector_block["baseline_id"] = baseline_id
    request: dict[str, Any] = {
        "scope": {"tenant_id": tenant, "organization_id": org, "repository_id": repo},
        "selector": selector_block,
    }
    if query is not None:
        request["query"] = query
    if element_ids:
        request["element_ids"] = list(element_ids)
    if as_of is not None:
        request["as_of"] = as_of
    if max_items is not None:
        request["budget"] = {"max_items": max_items}
    return request


class ServiceDriver:
    """Every step through ``MemoryService`` in-process: the reference run."""

    name: ClassVar[str] = "service"

    def __init__(self, world: World, ingestor: Caller) -> None:
        self.world = world
        self.ingestor = ingestor
        self.svc = world.svc

    @classmethod
    def bypassed(cls) -> set[str]:
        """The steps this driver leaves to the service in-process (not overridden)."""
        return {s for s in STEPS if getattr(cls, s) is getattr(ServiceDriver, s)}

    def _run(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        """The service's answer as every surface emits it (its model's JSON)."""
        try:
            return as_json(call(*args, **kwargs))
        except AmeideError as exc:
            raise SurfaceError(self.name, exc.code, exc.message, exc.to_dict()["details"]) from exc

    # -- the steps -------------------------------------------------------------------------
    def ingest(self, who: Caller, source: str) -> dict[str, Any]:
        return dict(self._run(self.svc.ingest.ingest_backlog, who, source, self.world.repo))

    def create_element(self, who: Caller, title: str, body: str, type_key: str) -> dict[str, Any]:
        out = self._run(
            self.svc.elements.create_element,
            who,
            self.world.repo,
            title=title,
            body=body,
            type_key=type_key,
        )
        return dict(out)

    def create_baseline(self, who: Caller, name: str) -> dict[str, Any]:
        return dict(self._run(self.svc.publishing.create_baseline, who, self.world.repo, name))

    def promote(self, who: Caller, baseline_id: str) -> dict[str, Any]:
        return dict(self._run(self.svc.publishing.promote, who, baseline_id, self.world.repo))

    def read_context(self, who: Caller, repository: str, **kw: Any) -> dict[str, Any]:
        return dict(self._run(self.svc.reading.read_context, who, read_request(repository, **kw)))

    def propose(
        self,
        who: Caller,
        repository: str,
        *,
        element_id: str,
        target_version_id: str,
        body: str,
        summary: str,
        client_request_id: str | None = None,
    ) -> dict[str, Any]:
        out = self._run(
            self.svc.curation.propose,
            who,
            repository,
            body=body,
            summary=summary,
            element_id=element_id,
            target_version_id=target_version_id,
            client_request_id=client_request_id,
        )
        return dict(out)

    def show_proposal(self, who: Caller, proposal_id: str) -> dict[str, Any]:
        return dict(self._run(self.svc.curation.proposal_show, who, proposal_id))

    def accept(self, who: Caller, proposal_id: str, rationale: str | None = None) -> dict[str, Any]:
        return dict(self._run(self.svc.review.accept, who, proposal_id, rationale))

    def rebase(self, who: Caller, proposal_id: str) -> dict[str, Any]:
        """The new OPEN proposal (the service's shape without the extra views)."""
        return dict(self._run(self.svc.review.rebase, who, proposal_id))

    def verify_citations(
        self, who: Caller, context_id: str, citations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return dict(self._run(self.svc.reading.verify_citations, who, context_id, citations))

    def element_history(self, who: Caller, element_id: str) -> dict[str, Any]:
        return dict(self._run(self.svc.elements.element_history, who, element_id))

    def get_element(
        self, who: Caller, element_id: str, version_id: str | None = None
    ) -> dict[str, Any]:
        return dict(self._run(self.svc.elements.get_element, who, element_id, version_id))

    def read_without_credentials(self, repository: str, query: str) -> dict[str, Any]:
        """No credentials at all: only a surface can be asked that (the service always has a
        caller), so the reference refuses it here the way every adapter must."""
        raise SurfaceError(self.name, "UNAUTHENTICATED", "no credentials", {})


# ---- CLI ---------------------------------------------------------------------------------


class CliDriver(ServiceDriver):
    """``ameide --home HOME --as PRINCIPAL … --json`` in-process (``CliRunner``)."""

    name = "cli"

    def __init__(self, world: World, ingestor: Caller, scratch: Path) -> None:
        super().__init__(world, ingestor)
        self.home = world.app.settings.home
        self.scratch = scratch
        self.runner = CliRunner()
        self._files = 0

    def file(self, text: str) -> str:
        """A scratch file holding ``text`` (bodies, citations)."""
        self._files += 1
        path = self.scratch / f"input-{self._files}"
        path.write_text(text, encoding="utf-8")
        return str(path)

    def cli(self, who: Caller | None, *args: str, ok_exit: int = 0) -> dict[str, Any]:
        """Run one command; its JSON document, or ``SurfaceError`` from ``{"error": …}``."""
        argv = ["--home", str(self.home)]
        if who is not None:
            argv += ["--as", who.principal_id]
            if who.purpose:
                argv += ["--purpose", who.purpose]
            if who.on_behalf_of:
                argv += ["--on-behalf-of", who.on_behalf_of]
        result = self.runner.invoke(cli_app, [*argv, *args, "--json"])
        if result.exit_code in (0, ok_exit):
            out: dict[str, Any] = json.loads(result.stdout)
            return out
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )
        error = json.loads(result.stdout)["error"]
        assert set(error) == {"code", "message", "details"}, error
        assert result.exit_code == CLI_EXIT[error["code"]], (result.exit_code, error)
        assert result.stderr == f"error: {error['code']}: {error['message']}\n", result.stderr
        raise SurfaceError(self.name, error["code"], error["message"], error["details"])

    def ingest(self, who: Caller, source: str) -> dict[str, Any]:
        return self.cli(who, "ingest", "backlog", source, "--repo", self.world.repo)

    def create_element(self, who: Caller, title: str, body: str, type_key: str) -> dict[str, Any]:
        return self.cli(
            who, "element", "create", "--repo", self.world.repo, "--title", title,
            "--body-file", self.file(body), "--type-key", type_key,
        )  # fmt: skip

    def create_baseline(self, who: Caller, name: str) -> dict[str, Any]:
        return self.cli(who, "baseline", "create", "--repo", self.world.repo, "--name", name)

    def promote(self, who: Caller, baseline_id: str) -> dict[str, Any]:
        return self.cli(who, "promote", baseline_id, "--repo", self.world.repo)

    def read_context(
        self,
        who: Caller,
        repository: str,
        *,
        query: str | None = None,
        selector: str = "published",
        baseline_id: str | None = None,
        element_ids: Sequence[str] = (),
        as_of: str | None = None,
        max_items: int | None = None,
    ) -> dict[str, Any]:
        args = ["context", *([query] if query is not None else []), "--repo", repository]
        args += ["--selector", selector]
        args += ["--baseline", baseline_id] if baseline_id is not None else []
        for element_id in element_ids:
            args += ["--element", element_id]
        args += ["--as-of", as_of] if as_of is not None else []
        args += ["--max-items", str(max_items)] if max_items is not None else []
        return self.cli(who, *args)

    def propose(
        self,
        who: Caller,
        repository: str,
        *,
        element_id: str,
        target_version_id: str,
        body: str,
        summary: str,
        client_request_id: str | None = None,
    ) -> dict[str, Any]:
        args = ["propose", "--repo", repository, "--element", element_id]
        args += ["--target-version", target_version_id, "--body-file", self.file(body)]
        args += ["--summary", summary]
        if client_request_id is not None:
            args += ["--client-request-id", client_request_id]
        return self.cli(who, *args)

    def show_proposal(self, who: Caller, proposal_id: str) -> dict[str, Any]:
        return self.cli(who, "proposal", "show", proposal_id)

    def accept(self, who: Caller, proposal_id: str, rationale: str | None = None) -> dict[str, Any]:
        return self.cli(
            who, "accept", proposal_id, *(["--rationale", rationale] if rationale else [])
        )

    def rebase(self, who: Caller, proposal_id: str) -> dict[str, Any]:
        return self.cli(who, "rebase", proposal_id)

    def verify_citations(
        self, who: Caller, context_id: str, citations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        path = self.file(json.dumps(citations))
        # exit 10 (a citation was not in the context) still prints the verdict
        return self.cli(who, "verify-citations", context_id, "--citations", path, ok_exit=10)

    def element_history(self, who: Caller, element_id: str) -> dict[str, Any]:
        return self.cli(who, "element", "history", element_id)

    def get_element(
        self, who: Caller, element_id: str, version_id: str | None = None
    ) -> dict[str, Any]:
        args = ["element", "show", element_id, *(["--version", version_id] if version_id else [])]
        return self.cli(who, *args)

    def read_without_credentials(self, repository: str, query: str) -> dict[str, Any]:
        return self.cli(None, "context", query, "--repo", repository)


# ---- REST --------------------------------------------------------------------------------


class RestDriver(ServiceDriver):
    """``/v1`` over real HTTP with a bearer token per principal."""

    name = "rest"

    def __init__(self, world: World, ingestor: Caller, http: httpx.Client) -> None:
        super().__init__(world, ingestor)
        self.http = http
        self.tokens: dict[str, str] = {}

    def headers(self, who: Caller | None) -> dict[str, str]:
        if who is None:
            return {}
        principal = who.principal_id
        if principal not in self.tokens:
            self.tokens[principal] = self.svc.tokens.create(self.world.admin, principal)["token"]
        out = {"Authorization": f"Bearer {self.tokens[principal]}"}
        if who.purpose:
            out["X-Ameide-Purpose"] = who.purpose
        if who.on_behalf_of:
            out["X-Ameide-On-Behalf-Of"] = who.on_behalf_of
        if who.roles:
            out["X-Ameide-Roles"] = ",".join(who.roles)
        return out

    def call(self, method: str, path: str, who: Caller | None, **kwargs: Any) -> dict[str, Any]:
        response = self.http.request(method, path, headers=self.headers(who), **kwargs)
        body = response.json()
        if response.status_code < 300:
            assert isinstance(body, dict), body
            return body
        assert set(body) == {"error"}, body
        error = body["error"]
        assert set(error) == {"code", "message", "details"}, error
        assert response.status_code == HTTP_STATUS[error["code"]], (response.status_code, error)
        raise SurfaceError(self.name, error["code"], error["message"], error["details"])

    @property
    def base(self) -> str:
        return f"/v1/repositories/{self.world.repo}"

    def create_element(self, who: Caller, title: str, body: str, type_key: str) -> dict[str, Any]:
        payload = {"title": title, "body": body, "type_key": type_key}
        return self.call("POST", f"{self.base}/elements", who, json=payload)

    def create_baseline(self, who: Caller, name: str) -> dict[str, Any]:
        return self.call("POST", f"{self.base}/baselines", who, json={"name": name})

    def promote(self, who: Caller, baseline_id: str) -> dict[str, Any]:
        return self.call("POST", f"{self.base}/promote", who, json={"baseline_id": baseline_id})

    def read_context(self, who: Caller, repository: str, **kw: Any) -> dict[str, Any]:
        return self.call("POST", "/v1/context", who, json=read_request(repository, **kw))

    def propose(
        self,
        who: Caller,
        repository: str,
        *,
        element_id: str,
        target_version_id: str,
        body: str,
        summary: str,
        client_request_id: str | None = None,
    ) -> dict[str, Any]:
        payload = {
            "element_id": element_id,
            "target_version_id": target_version_id,
            "body": body,
            "summary": summary,
        }
        if client_request_id is not None:
            payload["client_request_id"] = client_request_id
        return self.call("POST", f"/v1/repositories/{repository}/proposals", who, json=payload)

    def show_proposal(self, who: Caller, proposal_id: str) -> dict[str, Any]:
        return self.call("GET", f"/v1/proposals/{proposal_id}", who)

    def accept(self, who: Caller, proposal_id: str, rationale: str | None = None) -> dict[str, Any]:
        payload = {"rationale": rationale} if rationale else {}
        return self.call("POST", f"/v1/proposals/{proposal_id}/accept", who, json=payload)

    def rebase(self, who: Caller, proposal_id: str) -> dict[str, Any]:
        return self.call("POST", f"/v1/proposals/{proposal_id}/rebase", who)

    def verify_citations(
        self, who: Caller, context_id: str, citations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        path = f"/v1/context/{context_id}/verify-citations"
        return self.call("POST", path, who, json={"citations": citations})

    def element_history(self, who: Caller, element_id: str) -> dict[str, Any]:
        return self.call("GET", f"/v1/elements/{element_id}/history", who)

    def get_element(
        self, who: Caller, element_id: str, version_id: str | None = None
    ) -> dict[str, Any]:
        params = {"version_id": version_id} if version_id else {}
        return self.call("GET", f"/v1/elements/{element_id}", who, params=params)

    def read_without_credentials(self, repository: str, query: str) -> dict[str, Any]:
        return self.call("POST", "/v1/context", None, json=read_request(repository, query=query))


# ---- gRPC --------------------------------------------------------------------------------


def message_json(message: Message) -> dict[str, Any]:
    """A response message as the JSON object the other surfaces return (proto field names)."""
    out: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return out


def narrowing(who: Caller | None) -> dict[str, str]:
    """What a request sends beside its token to narrow it: purpose, on-behalf-of, roles."""
    if who is None:
        return {}
    sent = {"purpose": who.purpose, "on_behalf_of": who.on_behalf_of, "roles": ",".join(who.roles)}
    return {name: value for name, value in sent.items() if value}


class GrpcDriver(ServiceDriver):
    """The generated stubs on a real channel, with a bearer token per principal."""

    name = "grpc"

    def __init__(self, world: World, ingestor: Caller, client: GrpcClient) -> None:
        super().__init__(world, ingestor)
        self.g = client

    def call(self, method: Any, request: Message, who: Caller | None) -> dict[str, Any]:
        extra = narrowing(who)
        try:
            response = self.g.call(method, request, who, **extra)
        except grpc.RpcError as exc:
            err: Any = exc
            trailing = dict(err.trailing_metadata() or ())
            code = trailing.get("x-ameide-error-code")
            assert code is not None, (err.code(), err.details())
            assert err.code() == GRPC_STATUS[code], (err.code(), code)
            details = json.loads(trailing.get("x-ameide-error-details", "{}"))
            raise SurfaceError(self.name, code, err.details(), details) from None
        return message_json(response)

    def create_element(self, who: Caller, title: str, body: str, type_key: str) -> dict[str, Any]:
        request = kno.CreateElementRequest(
            repository_id=self.world.repo, title=title, body=body, type_key=type_key
        )
        return self.call(self.g.knowledge.CreateElement, request, who)

    def create_baseline(self, who: Caller, name: str) -> dict[str, Any]:
        request = gov.CreateBaselineRequest(repository_id=self.world.repo, name=name)
        return self.call(self.g.governance.CreateBaseline, request, who)

    def promote(self, who: Caller, baseline_id: str) -> dict[str, Any]:
        request = gov.PromoteRequest(baseline_id=baseline_id, repository_id=self.world.repo)
        out = self.call(self.g.governance.Promote, request, who)
        # the .proto names the pointer's sides from_/to_baseline_id ("from"/"to" in JSON)
        out["from"] = out.pop("from_baseline_id", None)
        out["to"] = out.pop("to_baseline_id")
        return out

    def read_context(self, who: Caller, repository: str, **kw: Any) -> dict[str, Any]:
        request = json_format.ParseDict(read_request(repository, **kw), proj.ReadContextRequest())
        return self.call(self.g.projection.GetReadContext, request, who)

    def propose(
        self,
        who: Caller,
        repository: str,
        *,
        element_id: str,
        target_version_id: str,
        body: str,
        summary: str,
        client_request_id: str | None = None,
    ) -> dict[str, Any]:
        request = gov.ProposeRequest(
            repository_id=repository,
            element_id=element_id,
            target_version_id=target_version_id,
            body=body,
            summary=summary,
            client_request_id=client_request_id,
        )
        return self.call(self.g.governance.Propose, request, who)

    def show_proposal(self, who: Caller, proposal_id: str) -> dict[str, Any]:
        request = gov.GetProposalRequest(proposal_id=proposal_id)
        return self.call(self.g.governance.GetProposal, request, who)

    def accept(self, who: Caller, proposal_id: str, rationale: str | None = None) -> dict[str, Any]:
        request = gov.AcceptProposalRequest(proposal_id=proposal_id, rationale=rationale)
        return self.call(self.g.governance.AcceptProposal, request, who)

    def rebase(self, who: Caller, proposal_id: str) -> dict[str, Any]:
        request = gov.RebaseProposalRequest(proposal_id=proposal_id)
        out: dict[str, Any] = self.call(self.g.governance.RebaseProposal, request, who)["proposal"]
        return out

    def verify_citations(
        self, who: Caller, context_id: str, citations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        request = proj.VerifyCitationsRequest(context_id=context_id)
        for citation in citations:
            json_format.ParseDict(citation, request.citations.add())
        return self.call(self.g.projection.VerifyCitations, request, who)

    def element_history(self, who: Caller, element_id: str) -> dict[str, Any]:
        request = kno.GetElementHistoryRequest(element_id=element_id)
        return self.call(self.g.knowledge.GetElementHistory, request, who)

    def get_element(
        self, who: Caller, element_id: str, version_id: str | None = None
    ) -> dict[str, Any]:
        request = kno.GetElementRequest(element_id=element_id, version_id=version_id)
        return self.call(self.g.knowledge.GetElement, request, who)

    def read_without_credentials(self, repository: str, query: str) -> dict[str, Any]:
        request = json_format.ParseDict(
            read_request(repository, query=query), proj.ReadContextRequest()
        )
        return self.call(self.g.projection.GetReadContext, request, None)


# ---- MCP ---------------------------------------------------------------------------------


class McpDriver(ServiceDriver):
    """The official SDK client over Streamable HTTP, one session per principal.

    Only the agent tools exist on MCP: ingest, element creation, baselines, promotion, the
    proposal view, accept and rebase run through the service in-process (see ``bypassed``).
    """

    name = "mcp"

    def __init__(
        self,
        world: World,
        ingestor: Caller,
        url: str,
        portal: BlockingPortal,
        stack: ExitStack,
    ) -> None:
        super().__init__(world, ingestor)
        self.url = url
        self.portal = portal
        self.stack = stack
        self.sessions: dict[str, Any] = {}

    def session(self, who: Caller) -> Any:
        principal = who.principal_id
        key = f"{principal}|{who.on_behalf_of}|{','.join(who.roles)}"
        if key not in self.sessions:
            token = self.svc.tokens.create(self.world.admin, principal)["token"]
            headers = {
                f"X-Ameide-{name.replace('_', '-').title()}": value
                for name, value in narrowing(who).items()
            }
            connect = http_session(self.url, token, **headers)
            self.sessions[key] = self.stack.enter_context(
                self.portal.wrap_async_context_manager(connect)
            )
        return self.sessions[key]

    def tool(self, who: Caller, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        client = self.session(who)
        result = self.portal.call(client.call_tool, f"memory.{name}", arguments)
        if not result.is_error:
            out: dict[str, Any] = result.structured_content
            assert json.loads(result.content[0].text) == out
            return out
        assert result.structured_content is None  # clients check it against the output schema
        error = json.loads(result.content[1].text)["error"]
        assert set(error) == {"code", "message", "details"}, error
        text = result.content[0].text
        assert text.startswith(f"{error['code']}: "), text
        assert "\n" not in text
        raise SurfaceError(self.name, error["code"], error["message"], error["details"])

    def read_context(
        self,
        who: Caller,
        repository: str,
        *,
        query: str | None = None,
        selector: str = "published",
        baseline_id: str | None = None,
        element_ids: Sequence[str] = (),
        as_of: str | None = None,
        max_items: int | None = None,
    ) -> dict[str, Any]:
        args: dict[str, Any] = {"repository": repository, "selector": selector}
        optional = {
            "query": query,
            "baseline_id": baseline_id,
            "as_of": as_of,
            "max_items": max_items,
            "element_ids": list(element_ids) or None,
        }
        args.update({k: v for k, v in optional.items() if v is not None})
        return self.tool(who, "get_context", args)

    def propose(
        self,
        who: Caller,
        repository: str,
        *,
        element_id: str,
        target_version_id: str,
        body: str,
        summary: str,
        client_request_id: str | None = None,
    ) -> dict[str, Any]:
        args = {
            "repository": repository,
            "element_id": element_id,
            "target_version_id": target_version_id,
            "body": body,
            "summary": summary,
        }
        if client_request_id is not None:
            args["client_request_id"] = client_request_id
        return self.tool(who, "propose", args)

    def verify_citations(
        self, who: Caller, context_id: str, citations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return self.tool(
            who, "verify_citations", {"context_id": context_id, "citations": citations}
        )

    def element_history(self, who: Caller, element_id: str) -> dict[str, Any]:
        return self.tool(who, "history", {"element_id": element_id})

    def get_element(
        self, who: Caller, element_id: str, version_id: str | None = None
    ) -> dict[str, Any]:
        args = {"element_id": element_id, **({"version_id": version_id} if version_id else {})}
        return self.tool(who, "get_element", args)

    def read_without_credentials(self, repository: str, query: str) -> dict[str, Any]:
        """The SDK client cannot even connect without a token: the MCP endpoint answers the
        ``initialize`` POST with 401 and the error body (what the client sees, read raw)."""
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "parity", "version": "0"},
            },
        }
        headers = {"Accept": "application/json, text/event-stream"}
        response = httpx.post(self.url, json=initialize, headers=headers, timeout=30)
        error = response.json()["error"]
        assert response.status_code == HTTP_STATUS[error["code"]], response.text
        raise SurfaceError(self.name, error["code"], error["message"], error["details"])


# ---- factories ---------------------------------------------------------------------------

SURFACES = ("cli", "rest", "grpc", "mcp")


@contextmanager
def open_driver(surface: str, world: World, ingestor: Caller, scratch: Path) -> Iterator[Any]:
    """The driver of ``surface`` over ``world``, with its server running while in use."""
    if surface == "service":
        yield ServiceDriver(world, ingestor)
    elif surface == "cli":
        scratch.mkdir(parents=True, exist_ok=True)
        yield CliDriver(world, ingestor, scratch)
    elif surface == "rest":
        app = create_app(world.svc, settings=world.app.settings, require_auth=True)
        with running(app) as base, httpx.Client(base_url=base, timeout=30) as http:
            yield RestDriver(world, ingestor, http)
    elif surface == "grpc":
        with serve(world) as client:
            yield GrpcDriver(world, ingestor, client)
    elif surface == "mcp":
        app = create_http_app(world.svc, settings=world.app.settings)
        with running(app) as base, start_blocking_portal() as portal, ExitStack() as stack:
            yield McpDriver(world, ingestor, f"{base}/mcp", portal, stack)
    else:  # pragma: no cover - a typo in a parameter list
        raise ValueError(surface)
