"""The service facade: every use case in one class."""

from __future__ import annotations

from service.admin_ops import AdminOps
from service.erasure_ops import ErasureOps
from service.history_ops import HistoryOps
from service.ingest_ops import IngestOps
from service.read_ops import ReadOps


class MemoryService(IngestOps, ReadOps, HistoryOps, AdminOps, ErasureOps):
    """Every use case, written once; CLI, MCP, REST and gRPC call these methods."""
