"""The console adds no business rule (issue 13): it calls ``MemoryService`` operations and
nothing else of the service layer, imports only value types and pure domain functions besides,
and keeps the service layer's size rules (≤ 60-line functions, ≤ 400-line modules, no class
inheriting another of its own). The import-linter contract in pyproject.toml keeps storage, the
read side, the composition root and the other adapters out of it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from service.app import operations

CONSOLE = Path(__file__).resolve().parents[2] / "console"
MODULES = sorted(CONSOLE.glob("*.py"))
ALLOWED_SERVICE_IMPORTS = {
    "service.app": {"MemoryService"},  # the facade, called by operation name
    "service.authz": {"Caller"},  # the caller value every surface builds
    "service.governance.queue": {
        "QueueFilter"
    },  # the queue's filter value (validated by the service)
    "service.audit.history": {"MAX_HISTORY"},  # the largest page of history the service answers
}
ALLOWED_DOMAIN_IMPORTS = {
    "domain.errors",  # the error taxonomy it renders
    "domain.values",  # parse_instant: the one reading of a typed instant, as on every surface
    "domain.merge",  # three_way_merge: the very function rebase uses, for its preview
    "domain.model",  # CONFLICT_MARKERS, has_conflict_markers: the service's conflict block
}
ALLOWED_EDGE_IMPORTS = {
    "edge.callers",
    "edge.errors",
    "edge.exports",
    "edge.reading",
    "edge.results",  # as_json: a result model as the JSON every surface renders
}
PURE = {"domain": ALLOWED_DOMAIN_IMPORTS, "edge": ALLOWED_EDGE_IMPORTS}


def _trees() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in MODULES]


def _service_calls(tree: ast.Module) -> set[str]:
    """Use cases called on the service, as ``group.name``: ``x.service.GROUP.NAME(…)`` or
    ``svc.GROUP.NAME(…)``."""
    called = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        group = node.func.value
        if not isinstance(group, ast.Attribute):
            continue
        owner = group.value
        on_service = (isinstance(owner, ast.Attribute) and owner.attr == "service") or (
            isinstance(owner, ast.Name) and owner.id in {"svc", "service"}
        )
        if on_service:
            called.add(f"{group.attr}.{node.func.attr}")
    return called


def test_the_console_calls_only_memory_service_operations() -> None:
    called = set().union(*(_service_calls(tree) for _, tree in _trees()))
    assert called <= set(operations()), called - set(operations())
    # the rule has teeth: the decisions and the reads the pages are made of are among them
    decisions = {"review.accept", "review.reject", "review.rebase", "publishing.promote"}
    assert decisions | {"publishing.rollback", "publishing.create_baseline"} <= called
    assert {"curation.proposal_list", "curation.proposal_show", "history.history"} <= called
    assert "reading.read_context" in called


def test_the_console_imports_only_the_facade_value_types_and_pure_domain_rules() -> None:
    offenders = []
    for path, tree in _trees():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue
            top = node.module.split(".")[0]
            names = {a.name for a in node.names}
            if top == "service":
                allowed = ALLOWED_SERVICE_IMPORTS.get(node.module, set())
                if not names <= allowed:
                    offenders.append(f"{path.name}: from {node.module} import {names}")
            elif top in PURE and node.module not in PURE[top]:
                offenders.append(f"{path.name}: from {node.module}")
    assert offenders == []


def test_no_console_class_inherits_another() -> None:
    classes = [n for _, t in _trees() for n in ast.walk(t) if isinstance(n, ast.ClassDef)]
    own = {c.name for c in classes}
    inheriting = [
        f"{c.name}({ast.unparse(b)})" for c in classes for b in c.bases if ast.unparse(b) in own
    ]
    assert inheriting == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_console_modules_and_handlers_stay_small(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400
    long = [
        node.name
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > 60
    ]
    assert long == []
