"""The MCP server: the tools of ``mcp_adapter.tools``, element versions as resources and the
prompts of ``mcp_adapter.prompts``.

Built on the SDK's low-level ``Server`` so this adapter owns the two things agents depend on:
argument errors come back as one actionable line (not a validation dump), and every result
carries ``structuredContent`` plus the same JSON as text. The synchronous service runs in a
worker thread (``anyio.to_thread``) so the event loop keeps serving.

Resources: ``ameide://{tenant}/{org}/{repo}/{element_id}@{version_id}`` is one element version,
read as its markdown body. The repository id ``tenant/org/repo`` keeps its two slashes, so a
URI is built by plain concatenation and parsed back unambiguously (ids never hold ``/`` or ``@``).
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ContentBlock,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
    Tool,
)
from pydantic import ValidationError

from domain.errors import AmeideError, InvalidArgument, NotFound
from edge.results import as_json
from edge.tracing import OK
from edge.version import package_version
from mcp_adapter import errors
from mcp_adapter.prompts import PROMPTS, prompt_named
from mcp_adapter.tools import TOOLS, ToolSpec
from service.admin.discovery_results import ElementRow
from service.app import MemoryService
from service.authz import Caller

SERVER_NAME = "ameide-memory"
INSTRUCTIONS = (
    "Governed team memory. Read with memory.get_context (or memory.search for titles), cite "
    "items by version_id, check your citations with memory.verify_citations, and suggest "
    "changes with memory.propose (a curator reviews them)."
)
RESOURCE_TEMPLATE = "ameide://{tenant}/{org}/{repo}/{element_id}@{version_id}"
RESOURCE_NOT_FOUND = -32002
_URI = re.compile(r"^ameide://([^/@]+)/([^/@]+)/([^/@]+)/([^/@]+)@([^/@]+)$")

CallerOf = Callable[[ServerRequestContext[Any]], Caller]
"""How a transport names the caller of a request (stdio: the local principal; HTTP: the token)."""
Observe = Callable[[str, str, str, float], None]
"""``(surface, operation, status, seconds)`` → metrics; ``ameide serve`` passes its own."""

access_log = logging.getLogger("ameide.access")
log = logging.getLogger("ameide.mcp")


def resource_uri(repository_id: str, element_id: str, version_id: str) -> str:
    """The URI of an element version (``repository_id`` is ``tenant/org/repo``)."""
    return f"ameide://{repository_id}/{element_id}@{version_id}"


def parse_resource_uri(uri: str) -> tuple[str, str, str]:
    """``(repository_id, element_id, version_id)`` of an ``ameide://`` URI."""
    m = _URI.match(uri)
    if m is None:
        raise MCPError(
            INVALID_PARAMS, f"malformed resource URI {uri!r}; expected {RESOURCE_TEMPLATE}"
        )
    tenant, org, repo, element_id, version_id = m.groups()
    return f"{tenant}/{org}/{repo}", element_id, version_id


class MemoryMcp:
    """The handlers behind one MCP ``Server`` (one per transport)."""

    def __init__(
        self,
        service: MemoryService,
        caller_of: CallerOf,
        *,
        tool_names: str = "dotted",
        surface: str = "mcp",
        observe: Observe | None = None,
    ) -> None:
        self.service = service
        self.caller_of = caller_of
        self.style = tool_names
        self.surface = surface
        self.observe = observe
        self.tools: dict[str, ToolSpec] = {}
        for spec in TOOLS:  # both spellings are accepted; only the configured one is listed
            self.tools[spec.name] = spec
            self.tools[spec.published_name("underscore")] = spec
        self.listed = [
            Tool(
                name=spec.published_name(tool_names),
                title=spec.title,
                description=spec.description,
                input_schema=spec.input.model_json_schema(),
                output_schema=spec.output.model_json_schema(),
                annotations=spec.annotations,
            )
            for spec in TOOLS
        ]

    def server(self) -> Server[Any]:
        """A low-level SDK server wired to these handlers."""
        return Server(
            SERVER_NAME,
            version=package_version(),
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
        )

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        """Every prompt with its arguments."""
        return ListPromptsResult(prompts=[p.listed() for p in PROMPTS])

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: GetPromptRequestParams
    ) -> GetPromptResult:
        """A prompt's message, naming the tools as this server spells them."""
        spec = prompt_named(params.name)
        return spec.get(dict(params.arguments or {}), self._tool_name)

    def _tool_name(self, name: str) -> str:
        return self.tools[name].published_name(self.style)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        """Every tool with its description, schemas and hints."""
        return ListToolsResult(tools=self.listed)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        """Validate the arguments, call the service once, map the outcome."""
        spec = self.tools.get(params.name)
        if spec is None:
            raise MCPError(INVALID_PARAMS, f"unknown tool {params.name!r}; see tools/list")
        name = spec.published_name(self.style)
        trace_id = uuid.uuid4().hex
        start = time.perf_counter()
        principal: str | None = None
        try:
            args = spec.input.model_validate(params.arguments or {})
            caller = self.caller_of(ctx)
            principal = caller.principal_id
            result = as_json(await anyio.to_thread.run_sync(spec.run, self.service, caller, args))
            outcome = _success(result, spec.hint(result) if spec.hint else None)
            status = OK
        except ValidationError as exc:
            outcome, status = errors.from_validation_error(name, exc), "INVALID_ARGUMENT"
        except AmeideError as exc:
            outcome, status = errors.from_service_error(exc), exc.code
        except Exception:
            log.exception("tool %s failed (trace %s)", name, trace_id)
            outcome, status = errors.internal_error(name, trace_id), "INTERNAL"
        self._record(name, status, principal, trace_id, time.perf_counter() - start)
        return outcome

    def _record(
        self, tool: str, status: str, principal: str | None, trace_id: str, seconds: float
    ) -> None:
        if self.observe is not None:
            self.observe(self.surface, tool, status, seconds)
        access_log.info(
            json.dumps(
                {
                    "ts": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                    "surface": self.surface,
                    "trace_id": trace_id,
                    "principal": principal,
                    "operation": tool,
                    "status": status,
                    "latency_ms": round(seconds * 1000, 3),
                }
            )
        )

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        """The head version of every element the caller may read, repository by repository, a
        page at a time (the cursor is opaque to clients: ``REPOSITORY|ELEMENT_ID``)."""
        cursor = params.cursor if params is not None else None
        try:
            caller = self.caller_of(ctx)
            listed, next_cursor = await anyio.to_thread.run_sync(
                lambda: _resource_page(self.service, caller, cursor)
            )
        except AmeideError as exc:
            raise MCPError(INVALID_PARAMS, f"{exc.code}: {exc.message}") from None
        return ListResourcesResult(resources=listed, next_cursor=next_cursor)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        """The one template: an element version."""
        return ListResourceTemplatesResult(
            resource_templates=[
                ResourceTemplate(
                    name="element-version",
                    title="Element version",
                    uri_template=RESOURCE_TEMPLATE,
                    description="One immutable element version as markdown. repository is "
                    "TENANT/ORG/REPO; ids come from memory.get_context items.",
                    mime_type="text/markdown",
                )
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        """The body of an element version the caller may read (else resource-not-found)."""
        uri = str(params.uri)
        repository_id, element_id, version_id = parse_resource_uri(uri)
        try:
            caller = self.caller_of(ctx)
            found = await anyio.to_thread.run_sync(
                lambda: self.service.elements.get_element(caller, element_id, version_id)
            )
            if found.element.repository_id != repository_id:
                raise NotFound(f"version {version_id} not found in {repository_id}")
        except AmeideError as exc:
            code = RESOURCE_NOT_FOUND if isinstance(exc, NotFound) else INVALID_PARAMS
            raise MCPError(code, f"{exc.code}: {exc.message}", {"uri": uri}) from None
        version = found.version
        if version is None or version.body is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"NOT_FOUND: {uri} has no body", {"uri": uri})
        meta = {
            "element_id": version.element_id,
            "version_id": version.version_id,
            "title": version.title,
            "content_sha256": version.content_sha256,
        }
        return ReadResourceResult(
            contents=[
                TextResourceContents(
                    uri=uri, text=version.body, mime_type="text/markdown", _meta=meta
                )
            ]
        )


RESOURCE_PAGE = 50


def _resource_page(
    service: MemoryService, caller: Caller, cursor: str | None
) -> tuple[list[Resource], str | None]:
    """One page of resources after ``cursor`` and the cursor of the next (``None``: the end)."""
    repositories = [r.repository_id for r in service.discovery.list_repositories(caller)]
    start_repo, _, after = (cursor or "").partition("|")
    if cursor and start_repo not in repositories:
        raise InvalidArgument("cursor is not one this server returned", field="cursor")
    todo = repositories[repositories.index(start_repo) :] if cursor else repositories
    out: list[Resource] = []
    for repo in todo:
        element_cursor = after if cursor and repo == start_repo and after else None
        while len(out) < RESOURCE_PAGE:
            page = service.discovery.list_elements(
                caller, repo, limit=RESOURCE_PAGE - len(out), cursor=element_cursor
            )
            out += [_resource(repo, e) for e in page.elements]
            element_cursor = page.next_cursor
            if element_cursor is None:
                break
        if len(out) >= RESOURCE_PAGE:
            last = element_cursor or ""
            following = repositories.index(repo) + 1
            if last:
                return out, f"{repo}|{last}"
            return out, f"{repositories[following]}|" if following < len(repositories) else None
    return out, None


def _resource(repo: str, e: ElementRow) -> Resource:
    return Resource(
        name=e.element_id,
        title=e.title,
        uri=resource_uri(repo, e.element_id, e.head_version_id),
        description=f"{e.source_kind.lower()} {e.element_kind.lower()} in {repo} "
        f"({e.classification}), head version",
        mime_type="text/markdown",
    )


def _success(result: Any, hint: str | None = None) -> CallToolResult:
    """The result as structured content and as JSON text; a hint (what to do next) follows as
    a text block of its own."""
    content: list[ContentBlock] = [
        TextContent(type="text", text=json.dumps(result, ensure_ascii=False))
    ]
    if hint:
        content.append(TextContent(type="text", text=hint))
    return CallToolResult(content=content, structured_content=result)
