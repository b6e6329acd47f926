"""Helpers of the read-side tests: evidence written straight through the unit of work, request
builders, and checks every read_context response must pass."""

from __future__ import annotations

from typing import Any

from domain.model import Element, Provenance
from domain.values import Classification, SourceKind
from runtime import App
from tests.conftest import World

EVIDENCE_TYPE = "ameide:ingest.backlog_md"
LINK_TYPE = "ameide:ingest.links_to"


def add_evidence(
    app: App,
    repo: str,
    path: str,
    body: str,
    *,
    title: str | None = None,
    metadata: dict[str, Any] | None = None,
    classification: str = "internal",
) -> tuple[str, str]:
    """An ingested evidence element with one version (as ingest writes it); (element, version)."""
    with app.uow() as uow:
        at = app.clock.now()
        el = Element.new(
            repo,
            kind="DOCUMENT",
            type_key=EVIDENCE_TYPE,
            source_kind=SourceKind.INGESTED_EVIDENCE,
            classification=Classification(classification),
            at=at,
            by="service:ingest",
        )
        uow.store.insert_element(el)
        v = el.next_version(
            title=title or path,
            body=body,
            metadata=metadata or {},
            at=at,
            provenance=Provenance(
                "service", "service:ingest", "ameide-ingest", "/src", "abc", path
            ),
        )
        uow.store.move_head(el.element_id, None, v)
        uow.store.insert_version(v)
        uow.commit()
    return el.element_id, v.version_id


def new_evidence_version(
    app: App, element_id: str, body: str, metadata: dict[str, Any] | None = None
) -> str:
    """A further version of an evidence element; returns its id."""
    with app.uow() as uow:
        el = uow.store.get_element(element_id)
        old = uow.store.get_version(el.head_version_id)
        v = el.next_version(
            title=old.title,
            body=body,
            metadata=metadata or {},
            at=app.clock.now(),
            provenance=old.provenance,
        )
        uow.store.move_head(element_id, el.head_version_id, v)
        uow.store.insert_version(v)
        uow.commit()
    return v.version_id


def scope(repo: str) -> dict[str, str]:
    """The request scope of ``tenant/org/repo``."""
    tenant, org, repository = repo.split("/")
    return {"tenant_id": tenant, "organization_id": org, "repository_id": repository}


def request(repo: str, query: str | None = None, **fields: Any) -> dict[str, Any]:
    """A read_context request; ``selector`` may be given as a kind name."""
    selector = fields.pop("selector", "published")
    if isinstance(selector, str):
        selector = {"kind": selector}
    out: dict[str, Any] = {"scope": scope(repo), "selector": selector, **fields}
    if query is not None:
        out["query"] = query
    return out


def publish(w: World) -> str:
    """Baseline every canonical head and promote it; returns the baseline id."""
    baseline = w.svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    w.svc.publishing.promote(w.publisher, baseline, w.repo, "test")
    return baseline


def versions(response: dict[str, Any]) -> set[str]:
    """The version ids of a response's items."""
    return {item["version_id"] for item in response["items"]}


def check_citations_slice_bodies(w: World, response: dict[str, Any]) -> None:
    """Every citation slices its version body exactly, and that text is in the item."""
    for item in response["items"]:
        body = w.svc.reading.get_version(w.admin, item["version_id"])["version"]["body"]
        for c in item["citations"]:
            assert c["version_id"] == item["version_id"]
            span = c["excerpt"]
            text = body[span["start"] : span["end"]]
            assert text
            assert text in item["content"]
            assert text in response["context_block"]
