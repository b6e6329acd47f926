"""The ``ameide`` console script. ``ameide --version`` answers here, before the command tree
(typer, rich and every command module, ~0.1 s) is imported; everything else goes to
:func:`cli.main.run`."""

from __future__ import annotations

import sys


def run() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        from edge.version import package_version

        print(f"ameide {package_version()}")
        return
    from cli.main import run as run_commands

    run_commands()
