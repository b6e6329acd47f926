"""``run_smoke``: phase 0, then the scenario in-process (phase 1), then over gRPC and MCP against
a server (phase 2), stopping at the first broken step.

    report = run_smoke(SmokeOptions(settings=Settings()))
    report.ok, report.failed.name if report.failed else None

Phases 1 and 2 run on an embedded instance the smoke creates in a temporary directory (each
phase in its own repository), so they never touch the configured home. With ``target`` phase 2
runs against that running server instead (see ``SmokeOptions``).

``after_step(name, smoke)`` is called after every passing step with this run's ``Smoke`` — the
instance and the scenario's ids — so a test can break something between two steps (delete the
index, alter a proposal's pin) and check that the next step notices and names itself.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from domain.errors import InvalidArgument
from service.settings import Settings
from smoke.checks import ScenarioState
from smoke.content import ADMIN
from smoke.embedded import SERVER_WORKERS, EmbeddedInstance, serving
from smoke.network import NetworkSurface
from smoke.phase0 import Phase0
from smoke.runner import Runner, SmokeReport, StepResult, Stop
from smoke.scenario import Scenario
from smoke.surface import ServiceSurface, Surface

PHASES = (0, 1, 2)
EMBEDDED_REPOS = {1: "smoke/eng/phase1", 2: "smoke/eng/phase2"}
DEFAULT_GRPC_PORT = 50051


@dataclass(frozen=True)
class SmokeOptions:
    """What to run and where.

    ``settings``: the configured installation phase 0 checks (None: from the environment).
    ``target``: base URL of a running ``ameide serve`` (REST and MCP); phase 2 then runs
    against it, with ``grpc_target`` (default: the target's host, port ``grpc_port``, which
    the CLI takes from AMEIDE_GRPC_PORT, else 50051) and ``token``, a global admin's bearer
    token — the smoke creates a repository ``smoke/eng/run-…`` there, grants roles, mints a
    token per principal (revoked at the end) and skips ingest, which no network surface offers.
    ``keep``: leave the embedded instance's directory in place.
    """

    settings: Settings | None = None
    phases: tuple[int, ...] = PHASES
    target: str | None = None
    grpc_target: str | None = None
    grpc_port: int = DEFAULT_GRPC_PORT
    """The target's gRPC port when ``grpc_target`` is not given (``AMEIDE_GRPC_PORT``)."""
    token: str | None = None
    keep: bool = False
    workdir: Path | None = None
    """Where to create the embedded instance (default: a new temporary directory)."""

    def check(self) -> None:
        """Refuse contradictory options before anything runs."""
        unknown = sorted(set(self.phases) - set(PHASES))
        if unknown or not self.phases:
            raise InvalidArgument(f"phases must be among 0, 1, 2 (got {list(self.phases)})")
        if self.target is not None:
            parts = urlsplit(self.target)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise InvalidArgument(f"--target {self.target!r} must be an http(s):// URL")
            if not self.token:
                raise InvalidArgument("--target needs --token (a global admin's bearer token)")
        elif self.grpc_target or self.token:
            raise InvalidArgument("--grpc-target and --token only apply with --target")

    @property
    def mcp_url(self) -> str:
        """The target's MCP endpoint."""
        assert self.target is not None
        return self.target.rstrip("/").removesuffix("/v1") + "/mcp"

    @property
    def grpc_address(self) -> str:
        """The target's gRPC address."""
        if self.grpc_target:
            return self.grpc_target
        assert self.target is not None
        host = urlsplit(self.target).hostname or "127.0.0.1"
        return f"[{host}]:{self.grpc_port}" if ":" in host else f"{host}:{self.grpc_port}"


AfterStep = Callable[[str, "Smoke"], None]


@dataclass
class Smoke:
    """One run: its options, the embedded instance (once created) and each phase's ids."""

    options: SmokeOptions
    root: Path
    report: SmokeReport = field(default_factory=SmokeReport)
    instance: EmbeddedInstance | None = None
    states: dict[int, ScenarioState] = field(default_factory=dict)


def run_smoke(
    options: SmokeOptions,
    *,
    after_step: AfterStep | None = None,
    on_result: Callable[[StepResult], None] | None = None,
) -> SmokeReport:
    """Run the selected phases; the report names the first broken step, if any."""
    options.check()
    root = options.workdir or Path(tempfile.mkdtemp(prefix="ameide-smoke-"))
    root.mkdir(parents=True, exist_ok=True)
    smoke = Smoke(options, root)
    hook = (lambda name: after_step(name, smoke)) if after_step else None
    runner = Runner(smoke.report, on_result=on_result, after_step=hook)
    started = time.perf_counter()
    try:
        _phases(smoke, runner)
    except Stop:
        pass
    finally:
        if smoke.instance is not None:
            smoke.instance.close()
        if options.keep:
            smoke.report.notes["kept"] = str(root)
        elif options.workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    smoke.report.notes["seconds"] = round(time.perf_counter() - started, 3)
    return smoke.report


def _phases(smoke: Smoke, runner: Runner) -> None:
    options = smoke.options
    if 0 in options.phases:
        for name, run in Phase0(options.settings or Settings()).steps():
            runner.step(f"phase0.{name}", run)
    if 1 in options.phases:
        _ensure_instance(smoke, runner, "phase1")
        _scenario(smoke, runner, 1, ServiceSurface(smoke.instance))
    if 2 in options.phases:
        if options.target is None:
            _ensure_instance(smoke, runner, "phase2")
        with _network(smoke, runner) as surface:
            _scenario(smoke, runner, 2, surface)


def _ensure_instance(smoke: Smoke, runner: Runner, phase: str) -> None:
    if smoke.instance is not None:
        return

    def create() -> str:
        smoke.instance = EmbeddedInstance.create(smoke.root / "instance")
        return smoke.instance.describe()

    runner.step(f"{phase}.instance", create)


def _scenario(smoke: Smoke, runner: Runner, phase: int, surface: Surface) -> None:
    remote = phase == 2 and smoke.options.target is not None
    repo = _remote_repo() if remote else EMBEDDED_REPOS[phase]
    state = smoke.states[phase] = ScenarioState(repo)
    smoke.report.notes.setdefault("repositories", {})[f"phase{phase}"] = repo
    runner.step(f"phase{phase}.setup", lambda: surface.setup(repo))
    backlog = None if remote else smoke.root / f"backlog-phase{phase}"
    for name, run in Scenario(surface, state, backlog).steps():
        runner.step(f"phase{phase}.{name}", run)


def _remote_repo() -> str:
    """A new repository on a running server for each run."""
    return f"smoke/eng/run-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(2)}"


@contextmanager
def _network(smoke: Smoke, runner: Runner) -> Iterator[NetworkSurface]:
    """Phase 2's surface: a server started over the instance (or the target), connected."""
    options = smoke.options
    holder: list[NetworkSurface] = []
    with ExitStack() as stack:

        def start() -> str:
            if options.target is None:
                assert smoke.instance is not None
                grpc_address, mcp_url, token = _start_server(smoke.instance, stack)
                where = f"started the server on loopback ({SERVER_WORKERS} worker processes)"
            else:
                assert options.token is not None
                grpc_address, mcp_url, token = options.grpc_address, options.mcp_url, options.token
                where = f"target {options.target}"
            surface = NetworkSurface(grpc_address, mcp_url, token, smoke.instance)
            stack.callback(_close, surface, smoke.report, revoke=options.target is not None)
            holder.append(surface)
            return f"{where}: {surface.connect()}"

        runner.step("phase2.server", start)
        yield holder[0]


def _start_server(instance: EmbeddedInstance, stack: ExitStack) -> tuple[str, str, str]:
    """Serve the instance (tokens required); the admin's token to drive it."""
    token = instance.service.tokens.create(ServiceSurface.caller(ADMIN), ADMIN).token
    endpoints = stack.enter_context(serving(instance))
    return endpoints.grpc, endpoints.mcp, str(token)


def _close(surface: NetworkSurface, report: SmokeReport, *, revoke: bool) -> None:
    try:
        if revoke:
            surface.revoke_tokens()
    except Exception as exc:  # the scenario's verdict stands; say the clean-up failed
        report.notes["cleanup_error"] = f"revoking the smoke's tokens failed: {exc}"
    finally:
        surface.close()
