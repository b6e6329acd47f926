"""The built wheel installs into a fresh virtual environment and works from there.

The top-level import names are generic (``domain``, ``cli``), so the wheel must carry every
package, the Alembic scripts and the Casbin model. Third-party dependencies come from this
environment through a ``.pth`` file, so installing needs no network; building does only when this
environment cannot satisfy the build backend itself (then pip builds in isolation).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns(
    ".venv",
    ".git",
    "tests",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".ameide",
    ".hypothesis",
)


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def can_build_without_isolation() -> bool:
    """Whether this environment has the build backend pyproject.toml asks for (no download)."""
    try:
        version = tuple(int(p) for p in metadata.version("setuptools").split(".")[:2])
    except metadata.PackageNotFoundError:
        return False
    has_bdist_wheel = version >= (70, 1)
    try:
        metadata.version("wheel")
        has_bdist_wheel = True
    except metadata.PackageNotFoundError:
        pass
    return version >= (69, 0) and has_bdist_wheel


def build_wheel(tmp_path: Path) -> Path:
    """Build from a copy of the sources, so the working tree gains no build/ directory."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=IGNORED)
    out = tmp_path / "dist"
    isolation = [] if not can_build_without_isolation() else ["--no-build-isolation"]
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", out, src, cwd=tmp_path)
    (wheel,) = out.glob("ameide_memory-*.whl")
    return wheel


def fresh_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A venv without pip; its third-party packages resolve to this environment's."""
    home = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(home)
    python = home / "bin" / "python"
    purelib = Path(
        run(
            python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path
        ).strip()
    )
    ours = [p for p in site.getsitepackages() if Path(p).name == "site-packages"]
    # Plain directory lines: the directory joins sys.path but its own .pth files (our editable
    # install's finder among them) are not processed, so the project itself is not visible.
    (purelib / "_ameide_test_deps.pth").write_text("\n".join(ours) + "\n", encoding="utf-8")
    return home, python


PROBE = """
import json, sys
import domain, service, storage, runtime, cli, migrations, service.authz
from storage import migrate
url = "sqlite:///" + sys.argv[1]
migrate.upgrade(url)
print(json.dumps({
    "files": {m.__name__: m.__file__ for m in (domain, service, storage, runtime, cli, migrations)},
    "migrated": migrate.current_revision(url) == migrate.head_revision(),
    "head": migrate.head_revision(),
}))
"""


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_venv_with_packages_migrations_and_console_script(
    tmp_path: Path,
):
    wheel = build_wheel(tmp_path)
    home, python = fresh_venv(tmp_path)
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--no-deps",
        "--no-index",
        "--force-reinstall",  # the .pth above shows this environment's editable install: pip
        wheel,  # would call the wheel's version installed already and skip it
        cwd=tmp_path,
    )

    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    work = tmp_path / "elsewhere"
    work.mkdir()
    probe = json.loads(run(python, "-c", PROBE, tmp_path / "probe.db", cwd=work, env=env))
    for name, file in probe["files"].items():
        assert Path(file).resolve().is_relative_to(home.resolve()), f"{name} from {file}"
        assert not Path(file).resolve().is_relative_to(ROOT), f"{name} from the source tree"
    assert probe["migrated"] is True
    assert probe["head"]

    script = home / "bin" / "ameide"
    assert script.exists()
    # The CLI is built by another change; once cli/main.py defines run(), the script must work.
    main = ROOT / "cli" / "main.py"
    if main.exists() and "\ndef run(" in main.read_text(encoding="utf-8"):
        assert "Usage" in run(script, "--help", cwd=work, env=env)
