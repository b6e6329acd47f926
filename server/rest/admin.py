"""``/v1`` setup and access: repositories, grants, tokens, legal hold, the keyword index, and
discovery (who am I, which repositories may I read).

Each endpoint parses its request, calls one ``MemoryService`` method with the caller and
returns the service's dict; errors go through ``server.rest.errors``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from server.rest.bodies import (
    CreateRepository,
    DelegationRequest,
    GrantRequest,
    LegalHoldRequest,
    TokenRequest,
)
from server.rest.deps import REPO, CallerDep, RepoDep, ServiceDep
from server.rest.errors import ERROR_RESPONSES
from server.rest.inputs import (
    DelegationSubject,
    GrantScope,
    Principal,
    PrincipalParam,
    RoleName,
    TokenId,
)
from service.admin.discovery_results import ReadableRepository, Whoami
from service.results import (
    GrantMade,
    GrantRevoked,
    GrantRow,
    IndexStatus,
    LegalHold,
    Repository,
    TokenMade,
    TokenRevoked,
    TokenRow,
)

router = APIRouter(tags=["setup and access"], responses=ERROR_RESPONSES)
JSON: dict[str, Any] = {"response_model_exclude_unset": True}
"""Return what the service returned: no ``null`` for fields it left out."""

Scope = Annotated[GrantScope, Query(description="*, TENANT, TENANT/ORG or TENANT/ORG/REPO.")]


@router.post(
    "/repositories", response_model=Repository, status_code=201, operation_id="create_repository"
)
def create_repository(body: CreateRepository, svc: ServiceDep, caller: CallerDep) -> Any:
    """Create TENANT/ORG/REPO (admin of the organization, tenant or everything)."""
    return svc.admin.create_repository(caller, body.repository_id)


@router.get("/whoami", response_model=Whoami, operation_id="whoami", **JSON)
def whoami(svc: ServiceDep, caller: CallerDep) -> Any:
    """Who you are to the service: principal, on behalf of whom, purpose, claimed roles, your
    own grants (role, scope, clearance) and whether you are a global admin."""
    return svc.discovery.whoami(caller)


@router.get(
    "/repositories",
    response_model=list[ReadableRepository],
    operation_id="list_repositories",
    **JSON,
)
def list_repositories(svc: ServiceDep, caller: CallerDep) -> Any:
    """The repositories you may read, with what you may do there, up to which classification
    you read, and whether a legal hold is on (the others are not listed)."""
    return svc.discovery.list_repositories(caller)


@router.post("/grants", response_model=GrantMade, status_code=201, operation_id="grant", **JSON)
def grant(body: GrantRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Grant a role with a clearance on a scope (admin of that scope)."""
    return svc.admin.grant(caller, body.principal_id, body.role, body.scope, body.clearance)


@router.get("/grants", response_model=list[GrantRow], operation_id="list_grants", **JSON)
def list_grants(scope: Scope, svc: ServiceDep, caller: CallerDep) -> Any:
    """Grants and delegations (role ``delegate``) made on one scope (admin of that scope)."""
    return svc.admin.list_grants(caller, scope)


@router.delete("/grants", response_model=GrantRevoked, operation_id="revoke", **JSON)
def revoke(
    principal_id: Annotated[Principal, Query(description="user:ID, agent:ID or service:ID.")],
    role: Annotated[RoleName, Query(description="The role to remove.")],
    scope: Scope,
    svc: ServiceDep,
    caller: CallerDep,
) -> Any:
    """Remove a grant (one the caller could have made: the same clearance rule as granting)."""
    return svc.admin.revoke(caller, principal_id, role, scope)


@router.post(
    "/delegations", response_model=GrantMade, status_code=201, operation_id="delegate", **JSON
)
def delegate(body: DelegationRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Let a principal act on behalf of another (``X-Ameide-On-Behalf-Of``) on a scope: an
    admin of the scope, or the one acted for, may. Acting for someone always takes the
    intersection of both principals' permissions."""
    return svc.admin.delegate(caller, body.principal_id, body.on_behalf_of, body.scope)


@router.delete("/delegations", response_model=GrantRevoked, operation_id="undelegate", **JSON)
def undelegate(
    principal_id: Annotated[Principal, Query(description="Who may act.")],
    on_behalf_of: Annotated[DelegationSubject, Query(description="For whom it may act.")],
    scope: Scope,
    svc: ServiceDep,
    caller: CallerDep,
) -> Any:
    """Remove a delegation (an admin of the scope, the one acted for, or its holder)."""
    return svc.admin.undelegate(caller, principal_id, on_behalf_of, scope)


@router.post(
    "/tokens", response_model=TokenMade, status_code=201, operation_id="create_token", **JSON
)
def create_token(body: TokenRequest, svc: ServiceDep, caller: CallerDep) -> Any:
    """Mint a bearer token (for yourself, or anyone as a global admin); the secret is shown once."""
    return svc.tokens.create(caller, body.principal_id)


@router.get("/tokens", response_model=list[TokenRow], operation_id="list_tokens", **JSON)
def list_tokens(
    svc: ServiceDep,
    caller: CallerDep,
    principal_id: Annotated[
        PrincipalParam,
        Query(
            description="Whose tokens (a global admin only; default: your own, or every "
            "token for a global admin)."
        ),
    ] = None,
) -> Any:
    """Tokens, never their secrets: your own; a global admin may list anyone's."""
    return svc.tokens.list_tokens(caller, principal_id)


@router.delete(
    "/tokens/{token_id}", response_model=TokenRevoked, operation_id="revoke_token", **JSON
)
def revoke_token(token_id: TokenId, svc: ServiceDep, caller: CallerDep) -> Any:
    """Revoke a token and every token minted with it (its owner or a global admin)."""
    return svc.tokens.revoke(caller, token_id)


@router.put(REPO + "/legal-hold", response_model=LegalHold, operation_id="set_legal_hold", **JSON)
def set_legal_hold(
    repo: RepoDep, body: LegalHoldRequest, svc: ServiceDep, caller: CallerDep
) -> Any:
    """Place (held: true) or release (held: false) a legal hold (admin)."""
    return svc.admin.set_legal_hold(caller, repo, body.held)


@router.get("/index/status", response_model=IndexStatus, operation_id="index_status", **JSON)
def index_status(svc: ServiceDep, caller: CallerDep) -> Any:
    """The keyword index's lag and consistency (global admin); pending work is applied in the
    background, not in the request."""
    return svc.index.index_status(caller, catch_up=False, background=True)


@router.post("/index/rebuild", response_model=IndexStatus, operation_id="index_rebuild", **JSON)
def index_rebuild(svc: ServiceDep, caller: CallerDep) -> Any:
    """Recompute the keyword index from the database (global admin)."""
    return svc.index.index_rebuild(caller)
