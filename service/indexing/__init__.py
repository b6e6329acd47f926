"""The derived indexes: upkeep from the outbox, rebuilds, status, the background thread."""
