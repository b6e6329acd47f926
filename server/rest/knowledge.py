"""``/v1`` knowledge: elements (and the list of them), versions, relationships, erasure."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from edge.reading import DEFAULT_MAX_NODES, DEFAULT_NEIGHBOURHOOD_HOPS, MAX_HOPS, MAX_NODES
from server.rest.bodies import AddRelationship, CreateElement, EraseRequest, ReasonRequest
from server.rest.deps import REPO, CallerDep, RepoDep, ServiceDep, drop_none
from server.rest.errors import ERROR_RESPONSES
from server.rest.inputs import AsOf as AsOfParam
from server.rest.inputs import ElementId, ElementIdParam, RelationshipId, VersionId, VersionIdParam
from service.admin.discovery import MAX_PAGE
from service.admin.discovery_results import ElementPage
from service.reading.results import Neighborhood, VersionWithChunks
from service.results import (
    ElementHistory,
    ElementWithVersion,
    Relationship,
    RetiredElement,
    Version,
)

router = APIRouter(tags=["knowledge"], responses=ERROR_RESPONSES)
JSON: dict[str, Any] = {"response_model_exclude_unset": True}
NO_REASON = ReasonRequest()

AsOf = Annotated[
    AsOfParam,
    Query(description="Answer as recorded at this instant (RFC 3339 with a zone, e.g. …Z)."),
]


@router.post(
    REPO + "/elements",
    response_model=ElementWithVersion,
    status_code=201,
    operation_id="create_element",
    **JSON,
)
def create_element(repo: RepoDep, body: CreateElement, svc: ServiceDep, caller: CallerDep) -> Any:
    """Create a canonical element directly (curator); version 1 becomes its head."""
    return svc.elements.create_element(caller, repo, **drop_none(body.model_dump()))


@router.get(REPO + "/elements", response_model=ElementPage, operation_id="list_elements", **JSON)
def list_elements(
    repo: RepoDep,
    svc: ServiceDep,
    caller: CallerDep,
    limit: Annotated[
        int, Query(ge=1, le=MAX_PAGE, description=f"At most this many elements (1-{MAX_PAGE}).")
    ] = 50,
    cursor: Annotated[
        ElementIdParam, Query(description="The next_cursor of the previous page.")
    ] = None,
) -> Any:
    """A page of the repository's elements you may read, in id order: title, kind, type,
    source, classification, head, retired; 404 when the repository is missing or not yours
    to read (the same answer)."""
    return svc.discovery.list_elements(caller, repo, limit=limit, cursor=cursor)


@router.get(
    "/elements/{element_id}", response_model=ElementWithVersion, operation_id="get_element", **JSON
)
def get_element(
    element_id: ElementId,
    svc: ServiceDep,
    caller: CallerDep,
    as_of: AsOf = None,
    version_id: Annotated[VersionIdParam, Query(description="This version, not the head.")] = None,
) -> Any:
    """An element with its head version (or a given version, or the head as of an instant)."""
    return svc.elements.get_element(caller, element_id, version_id, as_of)


@router.get(
    "/elements/{element_id}/history",
    response_model=ElementHistory,
    operation_id="element_history",
    **JSON,
)
def element_history(element_id: ElementId, svc: ServiceDep, caller: CallerDep) -> Any:
    """Every version of an element, oldest first (bodies omitted)."""
    return svc.elements.element_history(caller, element_id)


@router.post(
    "/elements/{element_id}/retire",
    response_model=RetiredElement,
    operation_id="retire_element",
    **JSON,
)
def retire_element(
    element_id: ElementId, svc: ServiceDep, caller: CallerDep, body: ReasonRequest = NO_REASON
) -> Any:
    """Retire an element (curator); refused under legal hold. Earlier as_of reads still see it."""
    return svc.elements.retire_element(caller, element_id, body.reason)


@router.get(
    "/elements/{element_id}/relationships",
    response_model=list[Relationship],
    operation_id="list_relationships",
    **JSON,
)
def list_relationships(
    element_id: ElementId, svc: ServiceDep, caller: CallerDep, as_of: AsOf = None
) -> Any:
    """Relationships of an element (both directions) whose other end you may read."""
    return svc.elements.list_relationships(caller, element_id, as_of)


@router.get(
    "/elements/{element_id}/neighborhood",
    response_model=Neighborhood,
    operation_id="expand",
    **JSON,
)
def expand(
    element_id: ElementId,
    svc: ServiceDep,
    caller: CallerDep,
    as_of: AsOf = None,
    hops: Annotated[
        int, Query(ge=1, le=MAX_HOPS, description=f"How far to walk (1-{MAX_HOPS}).")
    ] = DEFAULT_NEIGHBOURHOOD_HOPS,
    max_nodes: Annotated[
        int, Query(ge=1, le=MAX_NODES, description=f"At most this many nodes (1-{MAX_NODES}).")
    ] = DEFAULT_MAX_NODES,
    relationship_types: Annotated[
        list[str] | None, Query(description="Only these relationship type keys.")
    ] = None,
) -> Any:
    """The relationship neighbourhood of an element, through elements you may read only."""
    return svc.reading.expand(
        caller,
        element_id,
        hops=hops,
        relationship_types=tuple(relationship_types or ()),
        max_nodes=max_nodes,
        as_of=as_of,
    )


@router.get(
    "/versions/{version_id}",
    response_model=VersionWithChunks,
    operation_id="get_version",
    **JSON,
)
def get_version(
    version_id: VersionId, svc: ServiceDep, caller: CallerDep, as_of: AsOf = None
) -> Any:
    """A version by id with its element and chunk offsets (for citations)."""
    return svc.reading.get_version(caller, version_id, as_of)


@router.post(
    "/versions/{version_id}/erase", response_model=Version, operation_id="erase_version", **JSON
)
def erase_version(
    version_id: VersionId, body: EraseRequest, svc: ServiceDep, caller: CallerDep
) -> Any:
    """Erase a version's content (admin; right to be forgotten): ids, hash and audit remain."""
    return svc.erasure.erase_version(caller, version_id, body.reason)


@router.post(
    "/relationships",
    response_model=Relationship,
    status_code=201,
    operation_id="add_relationship",
    **JSON,
)
def add_relationship(body: AddRelationship, svc: ServiceDep, caller: CallerDep) -> Any:
    """Add a relationship between two elements of one repository (curator)."""
    return svc.elements.add_relationship(
        caller,
        body.source_element_id,
        body.target_element_id,
        kind=body.relationship_kind,
        type_key=body.type_key,
        metadata=body.metadata,
    )


@router.post(
    "/relationships/{relationship_id}/retire",
    response_model=Relationship,
    operation_id="retire_relationship",
    **JSON,
)
def retire_relationship(relationship_id: RelationshipId, svc: ServiceDep, caller: CallerDep) -> Any:
    """Retire a relationship (curator); earlier as_of reads still see it."""
    return svc.elements.retire_relationship(caller, relationship_id)
