"""Build the use-case groups from their parts and put the facade in front of them.

Each part is made once and handed to the groups that use it: the kernel (transactions, the
gate, the audit trail, the clock) to every group; the element writer and the decisions to
the write paths; the read pipeline (with the keyword index and, when installed, semantic
recall) to reading and evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ingest.source import BacklogSourceFactory
from projection.keyword_index import KeywordIndex
from projection.ranking import RankingWeights
from service.admin.discovery import Discovery
from service.admin.tenancy import Admin
from service.admin.tokens import TokenRegistry
from service.app import MemoryService
from service.audit.erasure import Erasure
from service.audit.history import History
from service.audit_trail import AuditTrail
from service.authz import Authorizer
from service.clock import Clock
from service.core import UowFactory
from service.freshness.drift import Drift
from service.freshness.gaps import Gaps
from service.gate import Gate
from service.governance.curation import Curation
from service.governance.decisions import Decisions
from service.governance.elements import Elements
from service.governance.proposal_book import ProposalBook
from service.governance.publishing import Publishing
from service.governance.review import Review
from service.governance.writer import ElementWriter
from service.indexing.background import BackgroundUpkeep
from service.indexing.maintenance import IndexAdmin
from service.indexing.semantic import SemanticRecall
from service.indexing.upkeep import IndexMaintainer
from service.ingesting.backlog import Ingest
from service.ingesting.links import LinkMirror
from service.ingesting.mirror import FileMirror
from service.ingesting.scheduling import SourceRunner, Timing
from service.ingesting.sources import Sources
from service.kernel import Kernel
from service.reading.context import Reading
from service.reading.evaluation import Evaluation
from service.reading.pipeline import ReadPipeline
from service.reading.selection_cache import SelectionCache


def compose(
    uow: UowFactory,
    clock: Clock,
    indexer: IndexMaintainer[KeywordIndex] | None = None,
    semantic: SemanticRecall | None = None,
    ranking: RankingWeights | Mapping[str, object] | None = None,
    backlog_sources: BacklogSourceFactory | None = None,
    status_upkeep: BackgroundUpkeep | None = None,
    source_home: Path | None = None,
    on_source_runner: Callable[[SourceRunner], None] | None = None,
    source_timing: Timing | None = None,
) -> tuple[MemoryService, ReadPipeline]:
    """The service, and its read pipeline (for benchmarks and tests that run reads bare).

    ``source_home``: where registered sources clone (``sources/``) and keep generated webhook
    secrets (``secrets/``); ``on_source_runner`` is handed the runner of registered sources
    (``ameide serve`` schedules it)."""
    k = Kernel(uow, Gate(Authorizer()), AuditTrail(clock), clock)
    writer = ElementWriter(k.audit)
    decisions = Decisions(writer, k.audit)
    book = ProposalBook(k, writer, decisions)
    pipeline = ReadPipeline(k, indexer, semantic, ranking, SelectionCache())
    tokens = TokenRegistry(k)
    curation = Curation(k, book)
    ingest = Ingest(k, FileMirror(k, writer), LinkMirror(k, writer), backlog_sources)
    runner = SourceRunner(
        k, ingest, source_home / "sources" if source_home else None, source_timing
    )
    if on_source_runner is not None:
        on_source_runner(runner)
    service = MemoryService(
        elements=Elements(k, writer),
        curation=curation,
        review=Review(k, book, decisions),
        publishing=Publishing(k, decisions),
        history=History(k),
        admin=Admin(k, tokens),
        discovery=Discovery(k),
        tokens=tokens,
        index=IndexAdmin(k, indexer, semantic, status_upkeep),
        erasure=Erasure(k),
        reading=Reading(k, pipeline),
        evaluation=Evaluation(k, pipeline),
        ingest=ingest,
        drift=Drift(k, curation),
        gaps=Gaps(k),
        sources=Sources(k, runner, source_home / "secrets" if source_home else None),
    )
    return service, pipeline
