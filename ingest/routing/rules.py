"""Routing rules: decide each file's target repository, tags, classification and policy.

Rules are tried by ``priority`` (higher first, ties in file order). The first matching normal
rule wins. ``override: true`` rules are compliance rules: the first matching one always wins, so
the fields it sets replace the normal rule's, whatever the priorities; tags accumulate
(defaults + normal rule + override). Unmatched files go to the command's repository with the
defaults. :meth:`Router.explain` tells which rule matched and why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from domain.values import lone_surrogate_at
from ingest.routing.conditions import MISSING, RoutableFile, evaluate, lookup
from ingest.routing.model import (
    CONDITION_TAGS,
    Classification,
    Policy,
    RoutingConfig,
    Rule,
    parse_template,
)

__all__ = [
    "RepositoryKey",
    "RoutableFile",
    "RouteDecision",
    "RouteError",
    "RouteExplanation",
    "Router",
    "RoutingConfigError",
    "RuleTrace",
]

_Labeled = tuple[str, Rule]  # ("'name' (#n)", rule)
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class RoutingConfigError(ValueError):
    """``routing.yaml`` is unreadable or invalid; ``errors`` name the rule and field of each."""

    def __init__(self, source: str, errors: list[str]) -> None:
        super().__init__(f"{source}: " + "; ".join(errors))
        self.errors = errors


class RouteError(ValueError):
    """A file cannot be routed (e.g. its repository template references a missing field)."""


@dataclass(frozen=True, order=True)
class RepositoryKey:
    """A repository's scope ``tenant/organization/repository``."""

    tenant: str
    organization: str
    repository: str

    @classmethod
    def parse(cls, text: str) -> RepositoryKey:
        """Parse ``T/O/R``; each part is letters, digits, ``.``, ``_`` or ``-``."""
        parts = text.split("/")
        if len(parts) != 3 or not all(_SEGMENT.match(p) and p not in (".", "..") for p in parts):
            raise ValueError(f"repository must be tenant/organization/repository, got {text!r}")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.tenant}/{self.organization}/{self.repository}"

    def resolve(self, target: str) -> RepositoryKey:
        """Resolve ``R``, ``O/R`` or ``T/O/R`` against this key; the tenant may not change."""
        parts = target.split("/")
        if not 1 <= len(parts) <= 3:
            raise RouteError(f"repository {target!r} must be R, O/R or T/O/R")
        try:
            full = RepositoryKey.parse(
                "/".join([self.tenant, self.organization][: 3 - len(parts)] + parts)
            )
        except ValueError:
            raise RouteError(f"repository {target!r} is not a valid repository name") from None
        if full.tenant != self.tenant:
            raise RouteError(f"repository {target!r} is in another tenant than {self.tenant!r}")
        return full


@dataclass(frozen=True)
class RouteDecision:
    """Where and how a file is stored; ``rule``/``override_rule`` name the rules that decided."""

    repository: RepositoryKey
    classification: Classification
    policy: Policy
    tags: tuple[str, ...]
    rule: str | None = None
    override_rule: str | None = None


@dataclass(frozen=True)
class RuleTrace:
    """How one rule fared against a file: whether it matched, and why (test by test)."""

    label: str
    priority: int
    override: bool
    matched: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class RouteExplanation:
    """The decision (or the routing error), the winning rules and every rule's evaluation."""

    decision: RouteDecision | None
    error: str | None
    traces: tuple[RuleTrace, ...]

    @property
    def summary(self) -> str:
        """One line: which rule matched, or why none did."""
        if self.decision is None:
            return f"routing failed: {self.error}"
        d = self.decision
        picked = ", ".join(
            part
            for part in (
                f"rule {d.rule}" if d.rule else "no rule matched (defaults)",
                f"override {d.override_rule}" if d.override_rule else "",
            )
            if part
        )
        return f"{picked} → {d.repository} [{d.classification}, {d.policy}]"


class Router:
    """Evaluates a validated rule set for files, falling back to ``default_repository``."""

    def __init__(self, config: RoutingConfig, default_repository: RepositoryKey) -> None:
        self.config = config
        self.default_repository = default_repository
        indexed = sorted(enumerate(config.rules), key=lambda pair: (-pair[1].priority, pair[0]))
        self._ordered = [(_label(index, rule), rule) for index, rule in indexed]

    @classmethod
    def from_yaml(
        cls, text: str, default_repository: RepositoryKey, source: str = "routing.yaml"
    ) -> Router:
        """Load and validate a rule file's text; raises :class:`RoutingConfigError`."""
        return cls(load_config(text, source), default_repository)

    @classmethod
    def from_file(cls, path: Path, default_repository: RepositoryKey) -> Router:
        """Load and validate a rule file; raises :class:`RoutingConfigError`."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RoutingConfigError(str(path), [f"cannot read: {exc}"]) from None
        return cls.from_yaml(text, default_repository, source=str(path))

    def route(self, file: RoutableFile) -> RouteDecision:
        """Decide for ``file``; raises :class:`RouteError` when a template cannot be filled."""
        normal = next(
            (p for p in self._ordered if not p[1].override and self._hit(p[1], file)), None
        )
        forced = next((p for p in self._ordered if p[1].override and self._hit(p[1], file)), None)
        return self._decide(file, normal, forced)

    def explain(self, file: RoutableFile) -> RouteExplanation:
        """Evaluate every rule for ``file`` and report the decision with reasons."""
        traces = []
        for label, rule in self._ordered:
            if rule.match is None:
                matched, reasons = True, ["no match clause: always"]
            else:
                matched, reasons = evaluate(rule.match, file)
            traces.append(RuleTrace(label, rule.priority, rule.override, matched, tuple(reasons)))
        try:
            decision, error = self.route(file), None
        except RouteError as exc:
            decision, error = None, str(exc)
        return RouteExplanation(decision, error, tuple(traces))

    def _hit(self, rule: Rule, file: RoutableFile) -> bool:
        return rule.match is None or evaluate(rule.match, file)[0]

    def _decide(
        self, file: RoutableFile, normal: _Labeled | None, forced: _Labeled | None
    ) -> RouteDecision:
        defaults = self.config.defaults
        chosen = [pair[1] for pair in (normal, forced) if pair is not None]
        classification, policy, template = defaults.classification, defaults.policy, None
        tags = list(defaults.tags)
        for rule in chosen:  # the override comes last, so what it sets wins
            actions = rule.actions
            classification = actions.classification or classification
            policy = actions.policy or policy
            template = actions.repository or template
            tags += actions.tags
        repository = self.default_repository
        if template is not None:
            repository = self.default_repository.resolve(_render(template, file))
        return RouteDecision(
            repository=repository,
            classification=classification,
            policy=policy,
            tags=tuple(dict.fromkeys(tags)),
            rule=normal[0] if normal else None,
            override_rule=forced[0] if forced else None,
        )


def load_config(text: str, source: str = "routing.yaml") -> RoutingConfig:
    """Parse and validate rule-file text; every error names the rule (name and number) and field."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RoutingConfigError(source, [f"not valid YAML: {exc}"]) from None
    where = _lone_surrogate(raw, ())
    if where is not None:  # a "\ud800" escape: its tags and names would poison every element
        problem = {"loc": where, "msg": "not valid Unicode text (it holds a lone surrogate)"}
        raise RoutingConfigError(source, [_describe(problem, raw)])
    try:
        return RoutingConfig.model_validate({} if raw is None else raw)
    except ValidationError as exc:
        raise RoutingConfigError(source, [_describe(err, raw) for err in exc.errors()]) from None


def _describe(error: Mapping[str, Any], raw: Any) -> str:
    """``rule 2 'pii' (rules[1]): match.all[0].gte: Input should be a valid number``."""
    loc = [part for part in error["loc"] if part not in CONDITION_TAGS]
    prefix = ""
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
        index = loc[1]
        name = _raw_rule_name(raw, index)
        prefix = f"rule {index + 1}{f' {name!r}' if name else ''} (rules[{index}])"
        loc = loc[2:]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    message = str(error["msg"]).removeprefix("Value error, ")
    return ": ".join(part for part in (prefix, where, message) if part)


def _lone_surrogate(value: Any, loc: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """Where in the loaded YAML a key or text holds a lone surrogate, or ``None``."""
    if isinstance(value, str):
        return loc if lone_surrogate_at(value, "") is not None else None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and lone_surrogate_at(key, "") is not None:
                return (*loc, f"key {key!r}")
            found = _lone_surrogate(item, (*loc, key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, (*loc, index))
            if found is not None:
                return found
    return None


def _raw_rule_name(raw: Any, index: int) -> str | None:
    try:
        name = raw["rules"][index]["name"]
    except (TypeError, KeyError, IndexError):
        return None
    return name if isinstance(name, str) else None


def _label(index: int, rule: Rule) -> str:
    return f"{rule.name!r} (#{index + 1})" if rule.name else f"#{index + 1}"


def _render(template: str, file: RoutableFile) -> str:
    """Fill a repository template; a missing or non-scalar field is an error, never ``{…}``."""
    out: list[str] = []
    for part in parse_template(template):
        if isinstance(part, str):
            out.append(part)
            continue
        ref = part[0]
        value = lookup(file, ref)
        if value is MISSING or value is None:
            raise RouteError(f"repository template {template!r} needs {ref}, which is missing")
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            raise RouteError(f"repository template {template!r}: {ref} is not a text value")
        if "/" in str(value):
            raise RouteError(f"repository template {template!r}: {ref} contains '/'")
        out.append(str(value))
    return "".join(out)
