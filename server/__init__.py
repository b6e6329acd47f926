"""Network adapters: REST (FastAPI) and gRPC over the one service layer, and `ameide serve`."""
