"""Build an ingest plan: a pure list of per-file actions for the service layer to apply.

Nothing here touches the database. The caller says what it already holds through two callables:
``current_hash(element_id)`` (the head's ``content_sha256``, ``None`` when there is no live
element) and optionally ``locate(repository, path)`` (the element currently mirroring a path,
which after a rename is not the id derived from that path). Re-planning the same commits against
the same state gives the same plan, so applying a plan twice creates nothing the second time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from domain.values import lone_surrogate_at, replace_lone_surrogates
from ingest import lifecycle
from ingest.document import PreparedDocument, Skip, SkipCode, prepare_document
from ingest.front_matter import JsonValue
from ingest.links.references import names_index, resolve_reference_outcome
from ingest.markdown import LinkKind, LinkRef
from ingest.paths import glob_match, unsafe_path_reason
from ingest.plan_model import (
    TYPE_KEY,
    ActionKind,
    FileAction,
    IngestPlan,
    IngestReport,
    LinkCandidate,
)
from ingest.routing.model import RoutingConfig
from ingest.routing.rules import RepositoryKey, RoutableFile, RouteError, Router
from ingest.screening import pii
from ingest.source import BacklogSource, BlobTooLargeError, ChangeKind, FileChange, TreeEntry

__all__ = ["TYPE_KEY", "PlanOptions", "build_plan", "element_id_for"]

CurrentHash = Callable[[str], str | None]
Locate = Callable[[str, str], str | None]
Progress = Callable[[int, int], None]


def element_id_for(repository: str, source_repo: str, path: str) -> str:
    """Deterministic element id: ``el_`` + 24 hex of sha256 of the three joined by NUL."""
    digest = hashlib.sha256("\0".join((repository, source_repo, path)).encode("utf-8"))
    return "el_" + digest.hexdigest()[:24]


@dataclass(frozen=True)
class PlanOptions:
    """Run settings: which files, the size cap, rename sensitivity, the redaction mask."""

    glob: str = "**/*.md"
    max_bytes: int = 2 * 1024 * 1024
    rename_similarity: int = 90
    mask: str = "█"


def build_plan(
    source: BacklogSource,
    *,
    repository: RepositoryKey,
    current_hash: CurrentHash,
    ref: str = "main",
    since: str | None = None,
    routing: RoutingConfig | None = None,
    options: PlanOptions | None = None,
    locate: Locate | None = None,
    progress: Progress | None = None,
) -> IngestPlan:
    """Plan the ingest of ``ref`` from ``source`` into ``repository`` (the routing fallback).

    With ``since`` (the last ingested commit) only the diff is read; without it, or when that
    commit no longer exists upstream, every matching file is planned (a full scan cannot see
    deletions: the caller retires live elements whose path is missing from the plan).
    """
    planner = _Planner(
        source,
        Router(routing or RoutingConfig(), repository),
        options or PlanOptions(),
        current_hash,
        locate,
    )
    return planner.run(ref, since, progress)


class _Planner:
    def __init__(
        self,
        source: BacklogSource,
        router: Router,
        options: PlanOptions,
        current_hash: CurrentHash,
        locate: Locate | None,
    ) -> None:
        self.source = source
        self.router = router
        self.options = options
        self.current_hash = current_hash
        self.locate = locate
        self.commit = ""
        self.ingestible: set[str] = set()
        self._by_name: dict[str, list[str]] | None = None
        self._times: dict[str, int] | None = None
        self.link_refs: dict[str, tuple[LinkRef, ...]] = {}

    def run(self, ref: str, since: str | None, progress: Progress | None) -> IngestPlan:
        """Resolve ``ref``, plan every change since ``since``, resolve links, count."""
        self.commit = self.source.resolve(ref)
        entries = {e.path: e for e in self.source.list_files(self.commit, self.options.glob)}
        self.ingestible = {p for p, e in entries.items() if _entry_skip(e, self.options) is None}
        notes: list[str] = []
        if since is not None and not self.source.has_commit(since):
            notes.append(f"last ingested commit {since} is not in the source; full scan")
            since = None
        changes = self._changes(since, entries)
        actions: list[FileAction] = []
        for done, change in enumerate(changes, start=1):
            actions += self._plan_change(change, entries)
            if progress is not None:
                progress(done, len(changes))
        actions = [self._with_links(a) for a in sorted(actions, key=_order)]
        actions = _mark_superseded(actions, self.ingestible)
        return IngestPlan(
            source_repo=self.source.source_repo,
            repository=str(self.router.default_repository),
            from_commit=since,
            to_commit=self.commit,
            full_scan=since is None,
            actions=tuple(actions),
            report=IngestReport.from_actions(actions),
            notes=tuple(notes),
        )

    def _changes(self, since: str | None, entries: dict[str, TreeEntry]) -> list[FileChange]:
        """The diff filtered by the glob; a rename across the glob becomes an add or a delete."""
        if since is None:
            return [FileChange(ChangeKind.ADDED, path) for path in entries]
        diff = self.source.diff(since, self.commit, self.options.rename_similarity)
        narrowed = (_narrow_to_glob(change, self.options.glob) for change in diff)
        return [change for change in narrowed if change is not None]

    def _plan_change(self, change: FileChange, entries: dict[str, TreeEntry]) -> list[FileAction]:
        if change.kind is ChangeKind.DELETED:
            return self._deleted(change.path, change.old_file_blob)
        entry = entries.get(change.path)
        if entry is None:  # defensive: the diff and the listing disagree
            return [
                self._skip(change.path, Skip(SkipCode.READ_ERROR, "file missing at the commit"))
            ]
        prepared = self._prepare(entry)
        if change.kind is ChangeKind.RENAMED and change.old_path is not None:
            return self._renamed(change, prepared)
        if isinstance(prepared, Skip):
            return [self._skip(entry.path, prepared)]
        action = self._present(entry.path, prepared)
        if change.kind is ChangeKind.MODIFIED and action.kind is ActionKind.NEW:
            # an edit that re-routes the file (e.g. another team) leaves the old element behind
            moved = self._deleted(
                entry.path, change.old_file_blob, keep=prepared.decision.repository
            )
            return [action, *moved]
        return [action]

    def _prepare(self, entry: TreeEntry) -> PreparedDocument | Skip:
        result = _entry_skip(entry, self.options) or self._read_and_prepare(entry)
        if isinstance(result, Skip):
            self.ingestible.discard(entry.path)
        else:
            self.link_refs[entry.path] = result.links
        return result

    def _read_and_prepare(self, entry: TreeEntry) -> PreparedDocument | Skip:
        try:
            data = self.source.read_blob(entry.blob_sha, self.options.max_bytes)
        except BlobTooLargeError as exc:
            return Skip(SkipCode.TOO_LARGE, str(exc))
        except Exception as exc:  # one unreadable file must not stop a run
            return Skip(SkipCode.READ_ERROR, f"cannot read blob: {exc}")
        try:
            return prepare_document(entry.path, data, self.router, self.options.mask)
        except Exception as exc:  # a bug or a parser limit: skip the file, keep the run going
            return Skip(SkipCode.UNPROCESSABLE, f"{type(exc).__name__}: {exc}")

    def _present(self, path: str, doc: PreparedDocument) -> FileAction:
        element_id = self._element_id(str(doc.decision.repository), path)
        current = self.current_hash(element_id)
        kind = (
            ActionKind.NEW
            if current is None
            else ActionKind.UNCHANGED
            if current == doc.content_sha256
            else ActionKind.CHANGED
        )
        return self._action(kind, path, element_id, doc)

    def _renamed(self, change: FileChange, prepared: PreparedDocument | Skip) -> list[FileAction]:
        """Keep the old path's element when it exists; otherwise plan the new path on its own."""
        old_path = change.old_path or ""
        if isinstance(prepared, Skip):
            skipped = self._skip(change.path, prepared)
            return [skipped, *self._deleted(old_path, change.old_file_blob)]
        old_id = self._element_id(str(prepared.decision.repository), old_path)
        current = self.current_hash(old_id)
        if current is None:
            gone = self._deleted(old_path, change.old_file_blob, keep=prepared.decision.repository)
            return [self._present(change.path, prepared), *gone]
        action = self._action(ActionKind.RENAMED, change.path, old_id, prepared)
        return [action.renamed_from(old_path, current != prepared.content_sha256)]

    def _deleted(
        self, path: str, old_blob_sha: str | None, keep: RepositoryKey | None = None
    ) -> list[FileAction]:
        """Retire the element mirroring ``path``, if there is one, looked up in the repository
        its old content routed to, then the fallback repository (never in ``keep``)."""
        repositories = [self.router.default_repository]
        routed = self._route_old(path, old_blob_sha)
        if routed is not None and routed != repositories[0]:
            repositories.insert(0, routed)
        for repository in repositories:
            if repository == keep:
                continue
            element_id = self._element_id(str(repository), path)
            if self.current_hash(element_id) is not None:
                return [FileAction(ActionKind.DELETED, path, element_id, str(repository))]
        return []

    def _route_old(self, path: str, blob_sha: str | None) -> RepositoryKey | None:
        if blob_sha is None or unsafe_path_reason(path):
            return None
        try:
            data = self.source.read_blob(blob_sha, self.options.max_bytes)
        except Exception:  # best effort: the fallback repository is tried too
            return None
        result = prepare_document(path, data, self.router, self.options.mask)
        if isinstance(result, PreparedDocument):
            return result.decision.repository
        try:
            return self.router.route(RoutableFile(path)).repository
        except RouteError:
            return None

    def _element_id(self, repository: str, path: str) -> str:
        found = self.locate(repository, path) if self.locate is not None else None
        return found or element_id_for(repository, self.source.source_repo, path)

    def _action(
        self, kind: ActionKind, path: str, element_id: str, doc: PreparedDocument
    ) -> FileAction:
        action = FileAction.for_document(
            kind, path, element_id, doc, source_repo=self.source.source_repo, commit=self.commit
        )
        when = source_time(doc.metadata, self._change_time(path))
        if when is None:
            return action
        return replace(action, metadata={**action.metadata, "source_time": when})

    def _change_time(self, path: str) -> int | None:
        """When the file last changed at the planned commit (one history walk per run)."""
        if self._times is None:
            walk = getattr(self.source, "change_times", None)
            self._times = walk(self.commit) if walk is not None else {}
        return self._times.get(path)

    def _skip(self, path: str, skip: Skip) -> FileAction:
        return FileAction(
            ActionKind.SKIPPED,
            masked_path(path, self.options.mask),
            skip_code=skip.code,
            skip_reason=skip.reason,
            pii_counts=skip.pii_counts,
        )

    def _fallback(self, candidates: tuple[str, ...]) -> tuple[str | None, bool]:
        """A link no candidate path matched, resolved by the remaining rules of
        ``ingest.links.references.resolve_reference`` (leading folders dropped, a unique file name);
        and whether it stayed unresolved because several files answer to it."""
        if self._by_name is None:
            self._by_name = names_index(self.ingestible)
        ambiguous = False
        for candidate in candidates:
            hit, several = resolve_reference_outcome(candidate, "", self.ingestible, self._by_name)
            if hit is not None:
                return hit, False
            ambiguous = ambiguous or several
        return None, ambiguous

    def _with_links(self, action: FileAction) -> FileAction:
        """Resolve link candidates against the files this run can ingest."""
        refs = self.link_refs.get(action.path, ()) if action.body is not None else ()
        if not refs:
            return action
        links = []
        for ref in refs:
            hit, ambiguous = next((c for c in ref.candidates if c in self.ingestible), None), False
            if hit is None and ref.candidates:
                hit, ambiguous = self._fallback(ref.candidates)
            target = hit or (ref.candidates[0] if ref.candidates else None)
            outside = target is not None and not glob_match(self.options.glob, target)
            links.append(
                LinkCandidate(ref.raw, ref.kind, target, hit is not None, ambiguous, outside)
            )
        return action.with_links(tuple(links))


def source_time(metadata: Mapping[str, JsonValue], committed: int | None) -> str | None:
    """When the source last changed: front matter ``updated`` (or ``last_updated``, ``date``)
    when it is a date, else the commit time of the last commit touching the file; ISO 8601
    UTC, or ``None`` when neither is known."""
    for name in ("updated", "last_updated", "date"):
        value = metadata.get(name)
        if isinstance(value, str) and value.strip():
            text = value.strip().replace("Z", "+00:00")
            try:
                parsed = datetime.fromisoformat(text)
            except ValueError:
                continue
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            return parsed.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if committed:
        return datetime.fromtimestamp(committed, UTC).isoformat().replace("+00:00", "Z")
    return None


def _mark_superseded(actions: list[FileAction], paths: set[str]) -> list[FileAction]:
    """Resolve each document's ``Supersedes`` / ``Superseded by`` statements to files (they
    become ``SUPERSEDES`` relationships), and mark the documents that other documents of this
    run say they supersede."""
    statements = {
        a.path: (
            tuple(str(r) for r in _refs(a.metadata.get("supersedes_refs"))),
            tuple(str(r) for r in _refs(a.metadata.get("superseded_by_refs"))),
        )
        for a in actions
        if a.body is not None
    }
    resolved = lifecycle.resolve_statements(statements, paths)
    marked = lifecycle.superseded_by_others(resolved)
    if not resolved:
        return actions
    out = []
    for a in actions:
        if a.body is None:
            out.append(a)
            continue
        supersedes, superseded_by = resolved.get(a.path, ((), ()))
        a = replace(
            a,
            supersedes=tuple(_statement(ref, target) for ref, target in supersedes),
            superseded_by=tuple(_statement(ref, target) for ref, target in superseded_by),
        )
        evidence = marked.get(a.path)
        if evidence and not a.metadata.get("superseded"):
            stated: dict[str, JsonValue] = {"state": lifecycle.SUPERSEDED, "evidence": evidence}
            metadata: dict[str, JsonValue] = {**a.metadata, "superseded": True}
            metadata["lifecycle"] = stated
            a = replace(a, metadata=metadata)
        out.append(a)
    return out


def _statement(ref: str, target: str) -> LinkCandidate:
    return LinkCandidate(ref, LinkKind.LIFECYCLE, target, True)


def _refs(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def masked_path(path: str, mask: str) -> str:
    """``path`` with every character of personal data in it masked (the PII barrier covers
    paths too: a skipped file's path is reported, and a path can hold an e-mail or a card).

    A path that is not UTF-8 (git names are bytes) is reported with its bytes escaped,
    ``caf\\xe9.md``: the report is stored and printed, and a lone surrogate could be neither."""
    if lone_surrogate_at(path, "path") is not None:
        try:
            path = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # not from undecodable bytes: there are none to show
            path = replace_lone_surrogates(path)
    found = pii.scan(path)
    return pii.redact(path, found.spans, mask) if found.detected else path


def _entry_skip(entry: TreeEntry, options: PlanOptions) -> Skip | None:
    """Refusals decided from the tree entry alone, before any byte is read."""
    reason = unsafe_path_reason(entry.path)
    if reason is not None:
        return Skip(SkipCode.UNSAFE_PATH, reason)
    found = pii.scan(entry.path)
    if found.detected:
        kinds = ", ".join(sorted(found.counts))
        reason = f"the path holds personal data ({kinds}): never stored; rename the file"
        return Skip(SkipCode.PII_PATH, reason, dict(found.counts))
    if entry.is_symlink:
        return Skip(SkipCode.SYMLINK, "symbolic link (never followed)")
    if entry.is_submodule:
        return Skip(SkipCode.SUBMODULE, "submodule (another repository)")
    if entry.size > options.max_bytes:
        return Skip(SkipCode.TOO_LARGE, str(BlobTooLargeError(entry.size, options.max_bytes)))
    return None


def _narrow_to_glob(change: FileChange, glob: str) -> FileChange | None:
    """Keep changes inside the glob; a rename across its edge becomes an add or a delete."""
    new_in = glob_match(glob, change.path)
    if change.kind is not ChangeKind.RENAMED or change.old_path is None:
        return change if new_in else None
    old_in = glob_match(glob, change.old_path)
    if new_in and old_in:
        return change
    if new_in:
        return FileChange(ChangeKind.ADDED, change.path)
    if old_in:
        return FileChange(
            ChangeKind.DELETED, change.old_path, None, change.old_blob_sha, change.old_mode
        )
    return None


def _order(action: FileAction) -> tuple[str, int]:
    return action.path, list(ActionKind).index(action.kind)
