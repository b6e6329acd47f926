"""The service's shape (issues 15 and 29): use-case groups that are composed, not inherited, each a
plain attribute of ``MemoryService``; capability rooms of at most 15 modules; small use cases
and modules. These fail the moment a mixin chain, a forwarding facade, a flat folder, a
100-line use case or a 500-line module comes back."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from service.app import MemoryService, operations

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
MODULES = sorted(SERVICE.rglob("*.py"))
MAX_MODULES_PER_FOLDER = 15
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400


def test_the_service_is_its_use_case_groups_as_plain_attributes() -> None:
    """No descriptor, no forwarding method: ``svc.curation.propose`` is ``Curation.propose``, so
    go-to-definition from an adapter lands on the use case."""
    public = {name for name in vars(MemoryService) if not name.startswith("_")}
    assert public <= {f.name for f in fields(MemoryService)} | {"__dataclass_fields__"}
    names = operations()
    assert len(names) >= 50
    for name in names:
        group, method = name.split(".")
        cls = next(f.type for f in fields(MemoryService) if f.name == group)
        cls = cls if isinstance(cls, type) else vars(__import__("service.app").app)[cls]
        use_case = vars(cls)[method]
        assert use_case.__doc__, f"{name} has no docstring"  # --help and docs read it
        # every public use case refuses an undelegated "on behalf of" first
        assert getattr(use_case, "__wrapped__", None) is not None, f"{name} is not @acting"


PACKAGES = sorted(
    path.parent.name
    for path in ROOT.glob("*/__init__.py")
    if path.parent.name != "tests"  # every top-level package but the tests
)


@pytest.mark.parametrize("root", PACKAGES)
def test_no_folder_holds_more_than_fifteen_modules(root: str) -> None:
    crowded = {
        str(folder.relative_to(ROOT)): n
        for folder in [ROOT / root, *(p for p in (ROOT / root).rglob("*") if p.is_dir())]
        if (n := len([m for m in folder.glob("*.py") if m.name != "__init__.py"]))
        > MAX_MODULES_PER_FOLDER
    }
    assert crowded == {}


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


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SERVICE)))
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


def test_every_group_is_the_use_case_object_runtime_builds() -> None:
    from runtime.compose import compose
    from service.clock import Clock

    service, _ = compose(lambda **_: None, Clock())  # type: ignore[arg-type,return-value]
    for name in operations():
        group, method = name.split(".")
        bound = getattr(getattr(service, group), method)
        assert type(bound.__self__).__name__ == type(getattr(service, group)).__name__, name
        assert bound.__func__ is vars(type(getattr(service, group)))[method], name
