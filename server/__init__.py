"""Network adapters: REST (FastAPI) and gRPC servers over the one service layer, and `ameide serve`."""
