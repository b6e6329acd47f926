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
from service.admin import Admin
from service.app import MemoryService, UseCases
from service.audit_trail import AuditTrail
from service.authz import Authorizer
from service.background import BackgroundUpkeep
from service.clock import Clock
from service.core import UowFactory
from service.curation import Curation
from service.decisions import Decisions
from service.discovery import Discovery
from service.drift import Drift
from service.elements import Elements
from service.erasure import Erasure
from service.evaluation import Evaluation
from service.gaps import Gaps
from service.gate import Gate
from service.history import History
from service.index_admin import IndexAdmin
from service.index_ops import IndexMaintainer
from service.ingest import Ingest
from service.ingest_links import LinkMirror
from service.ingest_mirror import FileMirror
from service.kernel import Kernel
from service.proposal_book import ProposalBook
from service.publishing import Publishing
from service.read_pipeline import ReadPipeline
from service.reading import Reading
from service.review import Review
from service.selection_cache import SelectionCache
from service.semantic_recall import SemanticRecall
from service.sources import Sources
from service.sources_runner import SourceRunner, Timing
from service.tokens import TokenRegistry
from service.writer import ElementWriter


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
    parts = UseCases(
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
    return MemoryService(parts), pipeline
