"""Remote mode: the CLI as a client of ``ameide serve`` (``--server URL`` / ``AMEIDE_SERVER``).

:class:`RemoteService` has the method names and signatures of the ``MemoryService`` use cases a
token holder's commands call, each one REST request. It returns the REST JSON (the service's own
views) and turns an error body back into the taxonomy's class by its ``code``, so a command
prints the same output and exits with the same code in both modes. Identity comes from the bearer
token alone: the ``caller`` argument is ignored (no principal is ever claimed); on-behalf-of and
purpose go as ``X-Ameide-On-Behalf-Of`` / ``X-Ameide-Purpose``, so the server's delegation check
applies. A use case without a REST operation (the ones that need the database: ``init``,
``index rebuild``, ``ingest`` from a local path…) is refused as local-only, naming the command.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import quote

import httpx

from cli.errors import error_class, local_only
from domain.errors import AmeideError
from domain.values import RepoRef, require_unicode_tree
from edge.errors import Unavailable
from edge.headers import ON_BEHALF_OF_HEADER, PURPOSE_HEADER
from edge.version import package_version

if TYPE_CHECKING:
    from service.reading.request import ReadRequest

TIMEOUT = httpx.Timeout(60.0, connect=10.0)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _seg(value: str) -> str:
    return quote(value, safe="")


def _repo(repo: str) -> str:
    """The repository's path, the id checked as the service checks it (a malformed one would
    otherwise reach no route and come back as a bare 404)."""
    ref = RepoRef.parse(repo)
    return "/repositories/" + "/".join(
        _seg(p) for p in (ref.tenant_id, ref.organization_id, ref.repository_id)
    )


def _params(**values: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, datetime):
            value = value.isoformat()
        out[key] = value
    return out


def _body(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class RemoteService:
    """The use cases of a token holder over ``/v1`` of one server."""

    def __init__(
        self,
        server: str,
        token: str,
        *,
        command: str,
        on_behalf_of: str | None = None,
        purpose: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.server = server.rstrip("/")
        self.command = command
        headers = {
            "Authorization": f"Bearer {token}",
            "User-Agent": f"ameide-cli/{package_version()}",
            "Accept": "application/json",
        }
        if on_behalf_of:
            headers[ON_BEHALF_OF_HEADER] = on_behalf_of
        if purpose:
            headers[PURPOSE_HEADER] = purpose
        self._http = httpx.Client(
            base_url=self.server + "/v1",
            headers=headers,
            timeout=TIMEOUT,
            transport=transport,
            # Plain http has no certificates to check: skip loading the CA bundle (~40 ms a
            # command). An https server is always verified.
            verify=not self.server.startswith("http://"),
        )
        self.elements = RemoteElements(self)
        self.curation = RemoteCuration(self)
        self.review = RemoteReview(self)
        self.publishing = RemotePublishing(self)
        self.history = RemoteHistory(self)
        self.admin = RemoteAdmin(self)
        self.discovery = RemoteDiscovery(self)
        self.tokens = RemoteTokens(self)
        self.index = RemoteIndex(self)
        self.erasure = RemoteErasure(self)
        self.reading = RemoteReading(self)
        self.drift = RemoteDrift(self)
        self.gaps = RemoteGaps(self)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __getattr__(self, name: str) -> NoReturn:
        """A use case with no REST operation: the command is local-only."""
        if name.startswith("_"):
            raise AttributeError(name)
        raise local_only(self.command)

    # -- transport -------------------------------------------------------------------------
    def _call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        if isinstance(body, Mapping):  # JSON cannot carry a lone surrogate: name it as the
            for field, value in body.items():  # service would, instead of failing to encode
                require_unicode_tree(value, field)
        require_unicode_tree(dict(params or {}), "query")
        try:
            response = self._http.request(method, path, params=params, json=body)
        except httpx.HTTPError as exc:  # never the request's headers: they hold the token
            raise Unavailable(
                f"cannot reach the server {self.server}: {type(exc).__name__}"
            ) from None
        if response.status_code >= 400:
            _raise_error(response, self.server)
        try:
            if response.status_code < 300:
                return response.json()
        except ValueError:
            pass
        raise Unavailable(
            f"the server {self.server} answered HTTP {response.status_code} without JSON: "
            "is --server the URL of `ameide serve`?"
        )


class RemoteGroup:
    """A use-case group over ``/v1``: each method is one REST call; one without a REST operation
    is local-only."""

    def __init__(self, remote: RemoteService) -> None:
        self._call = remote._call
        self._command = remote.command

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("_"):
            raise AttributeError(name)
        raise local_only(self._command)


class RemoteElements(RemoteGroup):
    """``elements`` over REST."""

    def get_element(
        self,
        caller: Any,
        element_id: str,
        version_id: str | None = None,
        as_of: datetime | None = None,
    ) -> Any:
        params = _params(version_id=version_id, as_of=as_of)
        return self._call("GET", f"/elements/{_seg(element_id)}", params=params)

    def element_history(self, caller: Any, element_id: str) -> Any:
        return self._call("GET", f"/elements/{_seg(element_id)}/history")

    def create_element(self, caller: Any, repo: str, **fields: Any) -> Any:
        return self._call("POST", _repo(repo) + "/elements", body=_body(**fields))

    def retire_element(self, caller: Any, element_id: str, reason: str | None = None) -> Any:
        path = f"/elements/{_seg(element_id)}/retire"
        return self._call("POST", path, body=_body(reason=reason))

    def add_relationship(
        self,
        caller: Any,
        source_element_id: str,
        target_element_id: str,
        *,
        kind: str,
        type_key: str,
        metadata: dict[str, Any] | None = None,
    ) -> Any:
        body = _body(
            source_element_id=source_element_id,
            target_element_id=target_element_id,
            relationship_kind=kind,
            type_key=type_key,
            metadata=metadata,
        )
        return self._call("POST", "/relationships", body=body)

    def retire_relationship(self, caller: Any, relationship_id: str) -> Any:
        return self._call("POST", f"/relationships/{_seg(relationship_id)}/retire")

    def list_relationships(
        self, caller: Any, element_id: str, as_of: datetime | None = None
    ) -> Any:
        path = f"/elements/{_seg(element_id)}/relationships"
        return self._call("GET", path, params=_params(as_of=as_of))


class RemoteCuration(RemoteGroup):
    """``curation`` over REST."""

    def propose(self, caller: Any, repo: str, **fields: Any) -> Any:
        return self._call("POST", _repo(repo) + "/proposals", body=_body(**fields))

    def proposal_list(
        self, caller: Any, repo: str, status: str | None = None, queue: Any = None
    ) -> Any:
        params = _params(status=status)
        if queue is not None:
            params |= _params(
                element_id=queue.element_id,
                proposer=queue.proposer,
                stale=queue.stale,
                conflicts=queue.conflicts,
                since=queue.since,
                order="newest" if queue.newest_first else None,
                limit=queue.limit,
                cursor=queue.cursor,
            )
        return self._call("GET", _repo(repo) + "/proposals", params=params)

    def proposal_show(self, caller: Any, proposal_id: str) -> Any:
        return self._call("GET", f"/proposals/{_seg(proposal_id)}")

    def revise(
        self,
        caller: Any,
        proposal_id: str,
        body: str,
        summary: str | None = None,
        title: str | None = None,
    ) -> Any:
        path = f"/proposals/{_seg(proposal_id)}/revise"
        return self._call("POST", path, body=_body(body=body, summary=summary, title=title))


class RemoteReview(RemoteGroup):
    """``review`` over REST."""

    def accept_preview(self, caller: Any, proposal_id: str) -> Any:
        return self._call("GET", f"/proposals/{_seg(proposal_id)}/accept-preview")

    def accept(
        self,
        caller: Any,
        proposal_id: str,
        rationale: str | None = None,
        expected_version_id: str | None = None,
    ) -> Any:
        body = _body(rationale=rationale, expected_version_id=expected_version_id)
        return self._call("POST", f"/proposals/{_seg(proposal_id)}/accept", body=body)

    def reject(self, caller: Any, proposal_id: str, rationale: str) -> Any:
        path = f"/proposals/{_seg(proposal_id)}/reject"
        return self._call("POST", path, body={"rationale": rationale})

    def rebase(self, caller: Any, proposal_id: str) -> Any:
        return self._call("POST", f"/proposals/{_seg(proposal_id)}/rebase")

    def withdraw(self, caller: Any, proposal_id: str, rationale: str | None = None) -> Any:
        path = f"/proposals/{_seg(proposal_id)}/withdraw"
        return self._call("POST", path, body=_body(rationale=rationale))


class RemotePublishing(RemoteGroup):
    """``publishing`` over REST."""

    def create_baseline(
        self,
        caller: Any,
        repo: str,
        name: str | None = None,
        pins: dict[str, str] | None = None,
    ) -> Any:
        path = _repo(repo) + "/baselines"
        return self._call("POST", path, body=_body(name=name, pins=pins))

    def baseline_show(self, caller: Any, baseline_id: str) -> Any:
        return self._call("GET", f"/baselines/{_seg(baseline_id)}")

    def list_baselines(self, caller: Any, repo: str) -> Any:
        return self._call("GET", _repo(repo) + "/baselines")

    def baseline_diff(self, caller: Any, baseline_a: str, baseline_b: str) -> Any:
        return self._call("GET", f"/baselines/{_seg(baseline_a)}/diff/{_seg(baseline_b)}")

    def promote(
        self,
        caller: Any,
        baseline_id: str,
        repo: str | None = None,
        reason: str | None = None,
        expected_baseline_id: str | None = None,
    ) -> Any:
        if repo is None:  # the baseline names its repository
            repo = str(self.baseline_show(caller, baseline_id)["repository_id"])
        body = _body(
            baseline_id=baseline_id, reason=reason, expected_baseline_id=expected_baseline_id
        )
        return self._call("POST", _repo(repo) + "/promote", body=body)

    def rollback(
        self, caller: Any, repo: str, to: str | None = None, reason: str | None = None
    ) -> Any:
        return self._call("POST", _repo(repo) + "/rollback", body=_body(to=to, reason=reason))

    def published(self, caller: Any, repo: str, as_of: datetime | None = None) -> Any:
        return self._call("GET", _repo(repo) + "/published", params=_params(as_of=as_of))


class RemoteHistory(RemoteGroup):
    """``history`` over REST."""

    def history(
        self,
        caller: Any,
        repo: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        element_id: str | None = None,
        actor: str | None = None,
        limit: int = 1000,
    ) -> Any:
        params = _params(since=since, until=until, element_id=element_id, actor=actor, limit=limit)
        return self._call("GET", _repo(repo) + "/history", params=params)

    def access_log(self, caller: Any, repo: str, limit: int = 1000) -> Any:
        return self._call("GET", _repo(repo) + "/access-log", params={"limit": limit})

    def verify_audit(self, caller: Any, repo: str | None, checkpoint: Any = None) -> Any:
        if checkpoint is not None:
            raise local_only(f"{self.command} --checkpoint", "the checkpoint key is the home's")
        return self._call(
            "GET", ("/audit/verify" if repo is None else _repo(repo) + "/audit/verify")
        )


class RemoteAdmin(RemoteGroup):
    """``admin`` over REST."""

    def create_repository(self, caller: Any, repo: str) -> Any:
        return self._call("POST", "/repositories", body={"repository_id": repo})

    def grant(
        self,
        caller: Any,
        principal: str,
        role: str,
        scope: str,
        clearance: str | None = None,
        on_behalf_of: str | None = None,
    ) -> Any:
        if on_behalf_of is not None:
            body = {"principal_id": principal, "on_behalf_of": on_behalf_of, "scope": scope}
            return self._call("POST", "/delegations", body=body)
        body = _body(principal_id=principal, role=role, scope=scope, clearance=clearance)
        return self._call("POST", "/grants", body=body)

    def revoke(
        self,
        caller: Any,
        principal: str,
        role: str,
        scope: str,
        on_behalf_of: str | None = None,
    ) -> Any:
        if on_behalf_of is not None:
            params = {"principal_id": principal, "on_behalf_of": on_behalf_of, "scope": scope}
            return self._call("DELETE", "/delegations", params=params)
        params = {"principal_id": principal, "role": role, "scope": scope}
        return self._call("DELETE", "/grants", params=params)

    def list_grants(self, caller: Any, scope: str) -> Any:
        return self._call("GET", "/grants", params={"scope": scope})

    def set_legal_hold(self, caller: Any, repo: str, held: bool) -> Any:
        return self._call("PUT", _repo(repo) + "/legal-hold", body={"held": held})


class RemoteDiscovery(RemoteGroup):
    """``discovery`` over REST."""

    def whoami(self, caller: Any) -> Any:
        return self._call("GET", "/whoami")

    def list_repositories(self, caller: Any) -> Any:
        return self._call("GET", "/repositories")

    def list_elements(
        self, caller: Any, repo: str, *, limit: int = 50, cursor: str | None = None
    ) -> Any:
        params = _params(limit=limit, cursor=cursor)
        return self._call("GET", _repo(repo) + "/elements", params=params)


class RemoteTokens(RemoteGroup):
    """``tokens`` over REST."""

    def create(self, caller: Any, principal: str) -> Any:
        return self._call("POST", "/tokens", body={"principal_id": principal})

    def revoke(self, caller: Any, token_id: str) -> Any:
        return self._call("DELETE", f"/tokens/{_seg(token_id)}")

    def list_tokens(self, caller: Any, principal: str | None = None) -> Any:
        return self._call("GET", "/tokens", params=_params(principal_id=principal))


class RemoteIndex(RemoteGroup):
    """``index`` over REST."""

    def index_status(self, caller: Any, **_: Any) -> Any:
        return self._call("GET", "/index/status")


class RemoteErasure(RemoteGroup):
    """``erasure`` over REST."""

    def erase_version(self, caller: Any, version_id: str, reason: str) -> Any:
        path = f"/versions/{_seg(version_id)}/erase"
        return self._call("POST", path, body={"reason": reason})


class RemoteReading(RemoteGroup):
    """``reading`` over REST."""

    def read_context(self, caller: Any, request: ReadRequest | dict[str, Any]) -> Any:
        if not isinstance(request, dict):  # as edge.reading.read_request built it
            request = request.model_dump(mode="json", exclude_unset=True)
        return self._call("POST", "/context", body=_body(**request))

    def verify_citations(self, caller: Any, context_id: str, citations: list[Any]) -> Any:
        path = f"/context/{_seg(context_id)}/verify-citations"
        return self._call("POST", path, body={"citations": citations})

    def replay(self, caller: Any, context_id: str, *, as_recorded: bool = False) -> Any:
        path = f"/context/{_seg(context_id)}/replay"
        return self._call("POST", path, body={"as_recorded": as_recorded})


class RemoteDrift(RemoteGroup):
    """``drift`` over REST."""

    def drift_list(self, caller: Any, repo: str) -> Any:
        return self._call("GET", _repo(repo) + "/drift")

    def drift_review(
        self,
        caller: Any,
        curated_element_id: str,
        evidence_element_id: str,
        *,
        evidence_version_id: str | None = None,
        note: str | None = None,
    ) -> Any:
        path = f"/elements/{_seg(curated_element_id)}/drift/{_seg(evidence_element_id)}/review"
        body = _body(evidence_version_id=evidence_version_id, note=note)
        return self._call("POST", path, body=body)

    def drift_propose(
        self,
        caller: Any,
        curated_element_id: str,
        evidence_element_id: str,
        *,
        body: str | None = None,
        summary: str | None = None,
    ) -> Any:
        path = f"/elements/{_seg(curated_element_id)}/drift/{_seg(evidence_element_id)}/propose"
        return self._call("POST", path, body=_body(body=body, summary=summary))


class RemoteGaps(RemoteGroup):
    """``gaps`` over REST."""

    def gaps(self, caller: Any, repo: str, topic: str | None = None) -> Any:
        return self._call("GET", _repo(repo) + "/gaps", params=_params(topic=topic))


def _raise_error(response: httpx.Response, server: str) -> NoReturn:
    """The error body as the taxonomy's exception (its message and details unchanged)."""
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
        details = error.get("details") or {}
    except (ValueError, KeyError, TypeError):
        raise Unavailable(
            f"the server {server} answered HTTP {response.status_code} without an error body"
        ) from None
    cls = error_class(code) or AmeideError
    exc = cls(message, **(details if isinstance(details, dict) else {}))
    exc.code = code  # a code this client does not know keeps its name
    raise exc
