"""Classification changes made by ingest: who may make them, and what they leave behind.

Routing rules decide an ingested file's classification, so a routing change — or a rule file an
ingestor controls — could declassify evidence. Three rules keep that from breaking permission
trimming (issue #16, item 2):

- **Within the ingestor's clearance**: a file is applied only when both the level its rules
  assign and the level its element holds today are within the clearance the caller may ingest
  at (``Permission.clearance_for(Action.INGEST)``); otherwise it is skipped as
  ``above_clearance``, and nothing about it is written.
- **Earlier versions keep their level**: lowering an element's classification never lowers what
  was written before. Every existing version is pinned at the old level (its own
  ``classification``) and the element gets a new version — the same content — at the new level;
  a reader cleared only for the new level reads that version and nothing older
  (``domain.model.version_classification``).
- **Audited**: every change is an ``element.reclassified`` event naming both levels, the rule,
  and (when lowered) how many earlier versions stayed at the old level.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from domain.values import Classification

if (
    TYPE_CHECKING
):  # the ingest pipeline is imported by the first run (``service.ingesting.backlog``)
    from ingest.plan_model import FileAction
    from ingest.state import MirrorState


def planned_level(action: FileAction) -> Classification:
    """The classification routing assigns to a document action (``internal`` by default)."""
    if action.classification is None:
        return Classification.INTERNAL
    return Classification(action.classification.value)


def above_clearance(
    action: FileAction, state: MirrorState, clearance: Mapping[str, Classification | None]
) -> str | None:
    """Why ``action`` is beyond what its caller may ingest, or ``None`` when it is within."""
    if action.repository is None:
        return None
    top = clearance.get(action.repository)
    if top is None:
        return None  # refused repositories are reported as "forbidden" elsewhere
    levels: list[tuple[str, Classification]] = []
    if action.kind != "deleted":  # ActionKind.DELETED (a StrEnum)
        levels.append(("routing classifies it", planned_level(action)))
    mirrored = state.files.get((action.repository, action.old_path or action.path))
    if mirrored is not None and mirrored.classification:
        levels.append(("its element is classified", Classification(mirrored.classification)))
    for what, level in levels:
        if level.rank > top.rank:
            return f"{what} {level.value}, above the caller's ingest clearance {top.value}"
    return None
