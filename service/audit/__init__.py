"""History and compliance: the audit trail, the access log, trimming of history, erasure."""
