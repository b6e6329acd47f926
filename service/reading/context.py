"""Use cases of the read side: read_context, verify_citations, replay, get_version, expand.

``read_context`` runs the pipeline (``service.reading.pipeline``) and stores every response under
its ``context_id`` with principal, on-behalf-of and purpose: the access log of what agents were
shown. A stored context can later be checked (``verify_citations``) and re-run
(``replay``) by the principal who read it or by an auditor of its repositories.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from domain.erasure import ERASED_QUERY, erased_note, redact_stored_context
from domain.errors import AmeideError, FailedPrecondition, InvalidArgument, NotFound
from domain.model import version_classification
from domain.values import new_id, validate_id, validate_instant
from projection import contexts
from projection.packaging import content_chunks
from service.audit.trimming import Visibility, readable_items
from service.authz import Caller, Permission, access_levels
from service.core import UnitOfWork, existing
from service.freshness.drift import drift_flags
from service.gate import Gate
from service.kernel import Kernel, acting
from service.reading import results as rr
from service.reading.limits import (
    DEFAULT_MAX_NODES,
    DEFAULT_NEIGHBOURHOOD_HOPS,
    MAX_HOPS,
    MAX_NODES,
)
from service.reading.pipeline import ReadPipeline
from service.reading.request import ReadRequest, parse_request
from service.views import element_view, iso, version_view

MAX_CITATIONS = 1_000


def effective_caller(caller: Caller, req: ReadRequest) -> Caller:
    """The authenticated caller, narrowed by what the request's principal block states."""
    block = req.principal
    if block.principal_id and block.principal_id != caller.principal_id:
        raise InvalidArgument(
            f"principal.principal_id {block.principal_id!r} is not the authenticated caller "
            f"({caller.principal_id}): it can only be your own; leave it out, and use "
            "on_behalf_of (with a delegation grant) to act for another principal",
            field="principal.principal_id",
        )
    if block.on_behalf_of and caller.on_behalf_of and block.on_behalf_of != caller.on_behalf_of:
        raise InvalidArgument(
            "principal.on_behalf_of differs from the caller's", field="principal.on_behalf_of"
        )
    return Caller(
        caller.principal_id,
        on_behalf_of=block.on_behalf_of or caller.on_behalf_of,
        roles=_narrowed_roles(caller.roles, tuple(block.roles)),
        purpose=block.purpose or caller.purpose,
        tool_id=caller.tool_id,
    )


def _narrowed_roles(claimed: tuple[str, ...], stated: tuple[str, ...]) -> tuple[str, ...]:
    """The roles a read may use: the body's ``principal.roles`` narrow the roles the request
    claimed (its header or metadata), never replace them — a body cannot claim back a role
    the header left out."""
    if not claimed or not stated:
        return claimed or stated
    wanted = {r.strip().lower() for r in claimed}
    kept = tuple(r for r in stated if r.strip().lower() in wanted)
    if not kept:
        raise InvalidArgument(
            f"principal.roles ({', '.join(stated)}) share no role with the roles the request "
            f"claims ({', '.join(claimed)})",
            field="principal.roles",
        )
    return kept


class Reading:
    """Permission-trimmed, version-pinned reads."""

    def __init__(self, k: Kernel, pipeline: ReadPipeline) -> None:
        self.k = k
        self.pipeline = pipeline

    @acting
    def read_context(self, caller: Caller, request: ReadRequest | dict[str, Any]) -> rr.ReadContext:
        """Context for an agent (docs/product.md §4), stored under the returned ``context_id``."""
        req = parse_request(request)
        caller = self.k.gate.check_caller(effective_caller(caller, req))
        self.pipeline.catch_up_index()
        body = self.pipeline.run_read(caller, req)
        if req.explain:
            self._flag_drift(caller, body["items"])
        return rr.ReadContext.model_validate(self._store_context(caller, req, body, "read_context"))

    def _flag_drift(self, caller: Caller, items: list[dict[str, Any]]) -> None:
        """With explain: each curated item whose page cites evidence that changed since the
        pinned version gets ``evidence_drift`` (docs/drift.md), so an agent can hedge."""
        repos = {i["repository_id"] for i in items if i["source_kind"] == "CANONICAL"}
        if not repos:
            return
        with self.k.uow(readonly=True) as uow:
            flags = drift_flags(uow, self.k.gate.permissions(uow, caller, sorted(repos)))
        for item in items:
            if item["source_kind"] == "CANONICAL" and item["element_id"] in flags:
                item["evidence_drift"] = flags[item["element_id"]]

    def _store_context(
        self, caller: Caller, req: ReadRequest, body: dict[str, Any], operation: str, **extra: Any
    ) -> dict[str, Any]:
        context_id = new_id("ctx")
        response = {"context_id": context_id, **body}
        request = req.model_dump(mode="json")
        request["principal"] = {
            "principal_id": caller.principal_id,
            "roles": list(caller.roles),
            "purpose": caller.purpose,
            "on_behalf_of": caller.on_behalf_of,
        }
        with self.k.uow() as uow:
            # A version erased while this read ran is not stored (nor returned) with its text;
            # the share lock makes an erasure in flight finish first (erasure_ops redacts the
            # contexts stored before it).
            erased = uow.store.erased_among([i["version_id"] for i in body["items"]], lock=True)
            if erased:
                notes = {v: erased_note(at) for v, at in erased.items()}
                response = redact_stored_context(response, notes) or response
            uow.store.insert_read_context(
                context_id=context_id,
                at=self.k.clock.now(),
                principal_id=caller.principal_id,
                on_behalf_of=caller.on_behalf_of,
                purpose=caller.purpose,
                repo_key=req.scope.repo_key,
                request=request,
                response=response,
            )
            versions = [i["version_id"] for i in response["items"]]
            self.k.audit.log_read(
                uow,
                caller,
                operation,
                req.scope.repo_key,
                context_id=context_id,
                version_ids=versions,
                **extra,
            )
            uow.commit()
        return response

    # -- stored contexts -------------------------------------------------------------------
    def _stored(self, uow: UnitOfWork, caller: Caller, context_id: str) -> dict[str, Any]:
        """A stored context the caller may inspect: its reader (or the one it read for), or an
        auditor of every repository it touched. Anything else is NOT_FOUND, like a missing id."""
        validate_id(context_id, "ctx", "context")
        self.k.gate.check_caller(caller)
        row: dict[str, Any] | None = uow.store.get_read_context(context_id)
        missing = NotFound(f"read context {context_id} not found", context_id=context_id)
        if row is None:
            raise missing
        if not self.k.gate.may_inspect_context(uow, caller, row):
            raise missing
        return row

    @acting
    def verify_citations(
        self, caller: Caller, context_id: str, citations: list[Any]
    ) -> rr.CitationsVerified:
        """Which of ``citations`` point into what context ``context_id`` returned."""
        if not isinstance(citations, list) or len(citations) > MAX_CITATIONS:
            raise InvalidArgument(f"citations must be a list of at most {MAX_CITATIONS}")
        with self.k.uow(readonly=True) as uow:
            row = self._stored(uow, caller, context_id)
            # only what the caller may read now answers (no oracle on hidden items)
            items = readable_items(Visibility(self.k.gate, uow, caller), row["response"]["items"])
            self.k.audit.log_read(
                uow, caller, "verify_citations", row["repo_key"], context_id=context_id
            )
            uow.commit()
        results = contexts.verify(items, citations)
        valid = sum(1 for r in results if r["valid"])
        return rr.CitationsVerified.model_validate(
            {
                "context_id": context_id,
                "all_valid": valid == len(results),
                "valid": valid,
                "invalid": len(results) - valid,
                "results": results,
            }
        )

    @acting
    def replay(self, caller: Caller, context_id: str, *, as_recorded: bool = False) -> rr.Replay:
        """Re-run a stored request as its principal and report what differs.

        By default the request runs as it was written (``as_of`` unset means now), which shows
        what changed since; ``as_recorded`` pins it to the instant the context resolved.
        """
        with self.k.uow(readonly=True) as uow:
            row = self._stored(uow, caller, context_id)
        stored = row["response"]
        if row["request"].get("query") == ERASED_QUERY:
            raise FailedPrecondition(
                f"context {context_id} cannot be replayed: content it returned was erased, "
                "and its query with it",
                context_id=context_id,
            )
        req = parse_request(row["request"])
        if as_recorded:
            at = datetime.fromisoformat(
                stored["selector_used"]["resolved_at"].replace("Z", "+00:00")
            )
            req = req.model_copy(update={"as_of": at})
        p = row["request"]["principal"]
        reader = Caller(
            p["principal_id"],
            on_behalf_of=p["on_behalf_of"],
            roles=tuple(p["roles"]),
            purpose=f"replay of {context_id}",
            tool_id=caller.tool_id,
        )
        self.pipeline.catch_up_index()
        try:
            body = self.pipeline.run_read(reader, req)
        except AmeideError as exc:  # e.g. the principal lost its grant since
            return rr.Replay.model_validate(
                {"context_id": context_id, "identical": False, "error": exc.to_dict()}
            )
        fresh = self._store_context(caller, req, body, "replay", replay_of=context_id)
        # The differences name only what the caller (an auditor, say) may read itself, ranked
        # among those: the replayed principal's view may hold more.
        with self.k.uow(readonly=True) as uow:
            vis = Visibility(self.k.gate, uow, caller)
            old_items = readable_items(vis, stored["items"])
            new_items = readable_items(vis, fresh["items"])
        complete = (len(old_items), len(new_items)) == (len(stored["items"]), len(fresh["items"]))
        changes = contexts.differences(old_items, new_items)
        before, after = stored["selector_used"], fresh["selector_used"]
        same_selection = before.get("baseline_id") == after.get("baseline_id")
        return rr.Replay(
            context_id=context_id,
            replay_context_id=fresh["context_id"],
            replayed_as=reader.principal_id,
            as_recorded=as_recorded,
            identical=not changes
            and same_selection
            and (not complete or stored["context_block"] == fresh["context_block"]),
            differences=changes,
            selector_used={"before": before, "after": after},
        )

    # -- other reads -----------------------------------------------------------------------
    @acting
    def get_version(
        self, caller: Caller, version_id: str, as_of: datetime | None = None
    ) -> rr.VersionWithChunks:
        """A version by id with its element and chunk offsets; NOT_FOUND when unreadable,
        missing, or recorded after ``as_of``."""
        validate_instant(as_of, "as_of")
        with self.k.uow(readonly=True) as uow:
            v, el, perm = self.k.gate.version(uow, caller, version_id)
            if as_of is not None and v.recorded_at > as_of:
                raise NotFound(f"version {version_id} not found", version_id=version_id)
            parent = self.k.gate.shown_parent(uow, perm, el, v)
            self.k.audit.log_read(uow, caller, "version.get", el.repo_key, version_id=version_id)
            uow.commit()
        chunks = (
            []
            if v.erased
            else [
                {
                    "chunk_key": c.chunk_key,
                    "heading_path": c.heading_path,
                    "start": c.start,
                    "end": c.end,
                }
                for c in content_chunks(v.body)
            ]
        )
        shown = {**version_view(v), "parent_version_id": parent}
        return rr.VersionWithChunks.model_validate(
            {"element": element_view(el), "version": shown, "chunks": chunks}
        )

    @acting
    def expand(
        self,
        caller: Caller,
        element_id: str,
        *,
        hops: int = DEFAULT_NEIGHBOURHOOD_HOPS,
        relationship_types: tuple[str, ...] = (),
        max_nodes: int = DEFAULT_MAX_NODES,
        as_of: datetime | None = None,
    ) -> rr.Neighborhood:
        """The relationship neighbourhood of an element, through readable elements only."""
        if not 1 <= hops <= MAX_HOPS or not 1 <= max_nodes <= MAX_NODES:
            raise InvalidArgument(f"hops must be 1-{MAX_HOPS} and max_nodes 1-{MAX_NODES}")
        validate_instant(as_of, "as_of")
        with self.k.uow(readonly=True) as uow:
            el, perm = self.k.gate.element(uow, caller, element_id)
            access = access_levels({el.repo_key: perm})
            nodes, edges = [element_id], {}
            frontier = [element_id]
            readable = _readable_by(self.k.gate, uow, caller, perm)
            for _ in range(hops):
                rows = uow.store.neighbours(frontier, access, as_of, relationship_types)
                frontier = []
                for r in (r for r in rows if readable(r["to"])):
                    if r["to"] not in nodes and len(nodes) <= max_nodes:
                        nodes.append(r["to"])
                        frontier.append(r["to"])
                    if r["to"] in nodes:
                        edges[r["relationship_id"]] = r
            views = [self._node(uow, perm, n, as_of) for n in nodes]
            self.k.audit.log_read(
                uow, caller, "relationship.expand", el.repo_key, element_id=element_id
            )
            uow.commit()
        return rr.Neighborhood.model_validate(
            {
                "element_id": element_id,
                "as_of": iso(as_of),
                "nodes": views,
                "edges": [
                    {
                        k: r[k]
                        for k in (
                            "relationship_id",
                            "type_key",
                            "source_element_id",
                            "target_element_id",
                        )
                    }
                    for r in edges.values()
                ],
            }
        )

    @staticmethod
    def _node(
        uow: UnitOfWork, perm: Permission, element_id: str, as_of: datetime | None
    ) -> dict[str, Any]:
        el = existing(uow.store.get_element(element_id))
        head = (
            uow.store.head_as_of(element_id, as_of)
            if as_of is not None
            else uow.store.get_version(el.head_version_id)
            if el.head_version_id
            else None
        )
        if head is not None and not perm.may_see(version_classification(el, head)):
            head = None  # a head written above the caller's clearance (lowered since): unnamed
        retired = uow.store.retired_at_instant(element_id, as_of) if as_of else el.retired
        return {
            **element_view(el),
            "version_id": head.version_id if head else None,
            "title": head.title if head else None,
            "retired": retired,
        }


def _readable_by(
    gate: Gate, uow: UnitOfWork, caller: Caller, perm: Permission
) -> Callable[[str], bool]:
    """Whether the caller may read an element by id (the gate's rule, proposals included),
    remembered per element for one walk."""
    seen: dict[str, bool] = {}

    def readable(element_id: str) -> bool:
        if element_id not in seen:
            el = uow.store.get_element(element_id)
            seen[element_id] = el is not None and gate.sees(uow, caller, perm, el)
        return seen[element_id]

    return readable
