"""Run ``ameide`` on a real pseudo-terminal of a given width, for what only a terminal gets (a
table sized to the window; piped output is records instead)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def in_terminal(cli: Any, columns: int, *args: str, as_: str | None = None) -> str:
    """What ``ameide --home HOME [--as P] ARGS`` prints on a terminal ``columns`` wide (stdout,
    styles removed, ``\\r\\n`` as ``\\n``); the command must succeed."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm", "PYTHONPATH": str(ROOT)}
    argv = ["--home", str(cli.home), *(["--as", as_] if as_ else []), *args]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from cli.main import run; run()", *argv],
        stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.PIPE, env=env, cwd=ROOT,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return ANSI.sub("", text)
