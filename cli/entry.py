"""The ``ameide`` console script. ``ameide --version`` answers here, before the command tree
(typer, rich and every command module, ~0.1 s) is imported; everything else goes to
:func:`cli.main.run`.

The cyclic garbage collector waits until the command runs: start-up (imports, the command's
declaration) makes only objects that live as long as the process, and collecting them over
and over as they are made cost a one-shot command about a fifth of its time. Whatever
exists when the command ends is frozen, so the interpreter's last collections at exit skip
it too (another ~0.1–0.4 s for a read).
"""

from __future__ import annotations

import gc
import sys


def run() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        from edge.version import package_version

        print(f"ameide {package_version()}")
        return
    gc.disable()
    try:
        from cli.main import run as run_commands

        run_commands()
    finally:
        gc.freeze()


def started() -> None:
    """The stack a command needs is loaded: keep what start-up made out of every later
    collection, and collect again (long-running commands — ``serve``, ``mcp``, ``test`` —
    need it). A no-op unless :func:`run` paused the collector (not in a test's process)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
