"""The version every surface reports (MCP ``serverInfo.version``, OpenAPI ``info.version``,
``ameide --version``): the installed package's, never a literal that drifts."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "ameide-memory"


def package_version() -> str:
    """The installed ``ameide-memory`` version (``0+unknown`` when run from a bare checkout)."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"
