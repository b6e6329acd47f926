"""The service facade: every operation by name, each delegated to the use-case group that owns it.

The groups (``service.governance.elements``, ``service.governance.curation``,
``service.governance.review``, …) are built in ``runtime`` with what they use and handed in; none
inherits another. Adapters (CLI, MCP, REST, gRPC) call only these operations.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Concatenate, Generic, ParamSpec, TypeVar

from service.admin.discovery import Discovery
from service.admin.tenancy import Admin
from service.admin.tokens import TokenRegistry
from service.audit.erasure import Erasure
from service.audit.history import History
from service.authz import Caller
from service.freshness.drift import Drift
from service.freshness.gaps import Gaps
from service.governance.curation import Curation
from service.governance.elements import Elements
from service.governance.publishing import Publishing
from service.governance.review import Review
from service.indexing.maintenance import IndexAdmin
from service.ingesting.backlog import Ingest
from service.ingesting.sources import Sources
from service.reading.context import Reading
from service.reading.evaluation import Evaluation

P = ParamSpec("P")
R = TypeVar("R")
G = TypeVar("G")


@dataclass(frozen=True)
class UseCases:
    """The use-case groups one service is made of."""

    elements: Elements
    curation: Curation
    review: Review
    publishing: Publishing
    history: History
    admin: Admin
    discovery: Discovery
    tokens: TokenRegistry
    index: IndexAdmin
    erasure: Erasure
    reading: Reading
    evaluation: Evaluation
    ingest: Ingest
    drift: Drift
    gaps: Gaps
    sources: Sources


class Op(Generic[G, P, R]):
    """One operation of the facade: ``group``'s method, with its signature and docstring."""

    def __init__(self, group: str, method: Callable[Concatenate[G, P], R]) -> None:
        self.group, self.method = group, method
        self.__doc__ = method.__doc__

    def __get__(self, service: MemoryService | None, owner: type) -> Callable[P, R]:
        if service is None:
            return self  # type: ignore[return-value]  # the class attribute, for introspection
        bound: Callable[P, R] = self.method.__get__(getattr(service._parts, self.group))
        return service._delegated(bound)


class MemoryService:
    """Every operation, written once; CLI, MCP, REST and gRPC call these."""

    def __init__(self, parts: UseCases) -> None:
        self._parts = parts

    def _delegated(self, operation: Callable[P, R]) -> Callable[P, R]:
        """``operation``, refusing a caller that names another principal without holding a
        delegation grant for it — before the operation looks anything up, so the refusal is
        the same whether what it asks for exists or not (``Gate.delegations``)."""

        @functools.wraps(operation)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            caller = args[0] if args else kwargs.get("caller")
            if isinstance(caller, Caller) and caller.on_behalf_of:
                k = self._parts.admin.k
                k.gate.check_caller(caller)
                with k.uow(readonly=True) as uow:
                    k.gate.delegations(uow, caller)
            return operation(*args, **kwargs)

        return call

    # elements and relationships
    create_element = Op("elements", Elements.create_element)
    get_element = Op("elements", Elements.get_element)
    element_history = Op("elements", Elements.element_history)
    retire_element = Op("elements", Elements.retire_element)
    add_relationship = Op("elements", Elements.add_relationship)
    retire_relationship = Op("elements", Elements.retire_relationship)
    list_relationships = Op("elements", Elements.list_relationships)
    # curation
    propose = Op("curation", Curation.propose)
    revise = Op("curation", Curation.revise)
    proposal_show = Op("curation", Curation.proposal_show)
    proposal_list = Op("curation", Curation.proposal_list)
    proposal_page = Op("curation", Curation.proposal_page)
    accept = Op("review", Review.accept)
    accept_preview = Op("review", Review.accept_preview)
    reject = Op("review", Review.reject)
    withdraw = Op("review", Review.withdraw)
    rebase = Op("review", Review.rebase)
    # publishing
    create_baseline = Op("publishing", Publishing.create_baseline)
    baseline_show = Op("publishing", Publishing.baseline_show)
    list_baselines = Op("publishing", Publishing.list_baselines)
    baseline_diff = Op("publishing", Publishing.baseline_diff)
    promote = Op("publishing", Publishing.promote)
    rollback = Op("publishing", Publishing.rollback)
    published = Op("publishing", Publishing.published)
    # reading
    read_context = Op("reading", Reading.read_context)
    verify_citations = Op("reading", Reading.verify_citations)
    replay = Op("reading", Reading.replay)
    get_version = Op("reading", Reading.get_version)
    expand = Op("reading", Reading.expand)
    evaluate = Op("evaluation", Evaluation.evaluate)
    eval_pipelines = Op("evaluation", Evaluation.eval_pipelines)
    # history and audit
    history = Op("history", History.history)
    history_page = Op("history", History.history_page)
    verify_audit = Op("history", History.verify_audit)
    audit_checkpoint = Op("history", History.audit_checkpoint)
    access_log = Op("history", History.access_log)
    erase_version = Op("erasure", Erasure.erase_version)
    # ingest
    ingest_backlog = Op("ingest", Ingest.ingest_backlog)
    ingest_status = Op("ingest", Ingest.ingest_status)
    routing_explain = Op("ingest", Ingest.routing_explain)
    # drift and knowledge gaps
    drift_list = Op("drift", Drift.drift_list)
    drift_review = Op("drift", Drift.drift_review)
    drift_propose = Op("drift", Drift.drift_propose)
    gaps = Op("gaps", Gaps.gaps)
    # registered sources (schedules and webhooks)
    add_source = Op("sources", Sources.add_source)
    list_sources = Op("sources", Sources.list_sources)
    pause_source = Op("sources", Sources.pause_source)
    resume_source = Op("sources", Sources.resume_source)
    remove_source = Op("sources", Sources.remove_source)
    source_status = Op("sources", Sources.source_status)
    run_source = Op("sources", Sources.run_source)
    source_hook = Op("sources", Sources.source_hook)
    # discovery
    whoami = Op("discovery", Discovery.whoami)
    list_repositories = Op("discovery", Discovery.list_repositories)
    list_elements = Op("discovery", Discovery.list_elements)
    hold_status = Op("discovery", Discovery.hold_status)
    # tenancy, identity, legal hold
    bootstrap_admin = Op("admin", Admin.bootstrap_admin)
    create_repository = Op("admin", Admin.create_repository)
    grant = Op("admin", Admin.grant)
    revoke = Op("admin", Admin.revoke)
    list_grants = Op("admin", Admin.list_grants)
    delegate = Op("admin", Admin.delegate)
    undelegate = Op("admin", Admin.undelegate)
    set_legal_hold = Op("admin", Admin.set_legal_hold)
    create_token = Op("tokens", TokenRegistry.create)
    revoke_token = Op("tokens", TokenRegistry.revoke)
    list_tokens = Op("tokens", TokenRegistry.list_tokens)
    authenticate = Op("admin", Admin.authenticate)
    authenticate_token = Op("tokens", TokenRegistry.authenticate)
    # the derived indexes and health
    index_status = Op("index", IndexAdmin.index_status)
    index_rebuild = Op("index", IndexAdmin.index_rebuild)
    embedding_build = Op("index", IndexAdmin.embedding_build)
    health = Op("index", IndexAdmin.health)
    open_proposal_counts = Op("index", IndexAdmin.open_proposal_counts)


def operations() -> list[str]:
    """The names of every operation of the facade, in the order it declares them."""
    return [name for name, value in vars(MemoryService).items() if isinstance(value, Op)]
