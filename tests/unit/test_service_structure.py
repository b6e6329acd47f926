"""The service's shape (issue 15): a facade of operations over use-case groups that are composed,
not inherited; small use cases and modules. These fail the moment a mixin chain, a plumbing
method on the facade, a 100-line use case or a 500-line module comes back."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from service.app import MemoryService, Op, operations

SERVICE = Path(__file__).resolve().parents[2] / "service"
MODULES = sorted(SERVICE.glob("*.py"))
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400


def test_the_facade_exposes_operations_only() -> None:
    public = {name for name in dir(MemoryService) if not name.startswith("_")}
    names = set(operations())
    assert public == names
    assert len(names) >= 50
    for name in names:
        op = vars(MemoryService)[name]
        assert isinstance(op, Op)
        assert op.__doc__, f"{name} has no docstring"  # --help and docs read it


def _classes() -> list[tuple[Path, ast.ClassDef]]:
    out = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                out.append((path, node))
    return out


def test_no_service_class_inherits_another_service_class() -> None:
    """Use cases and collaborators are composed; only value types (Pydantic models of results
    and requests, which extend a shared base) and the store ports (Protocols, which combine)
    inherit."""
    classes = _classes()
    models = {"BaseModel", "Protocol"}
    grew = True
    while grew:  # the Pydantic models and the Protocols, transitively
        known = len(models)
        models |= {n.name for _, n in classes if {ast.unparse(b) for b in n.bases} & models}
        grew = len(models) > known
    service_classes = {node.name for _, node in classes} - models
    offenders = [
        f"{path.name}: {node.name}({ast.unparse(base)})"
        for path, node in classes
        for base in node.bases
        if ast.unparse(base).split("[")[0] in service_classes
    ]
    assert offenders == []
    assert {"Curation", "Review", "Reading", "Gate"} <= service_classes  # the rule has teeth


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_modules_and_use_cases_stay_small(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES
    long = [
        f"{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_every_operation_is_its_use_case_bound_to_the_group_that_owns_it() -> None:
    from runtime.compose import compose
    from service.clock import Clock

    service, _ = compose(lambda **_: None, Clock())  # type: ignore[arg-type,return-value]
    for name in operations():
        op = vars(MemoryService)[name]
        bound = getattr(service, name).__wrapped__  # under the facade's delegation check
        assert bound.__func__ is op.method, name
        assert type(bound.__self__).__name__ == op.method.__qualname__.split(".")[0], name
        expected = list(inspect.signature(op.method).parameters)[1:]
        assert list(inspect.signature(bound).parameters) == expected, name
