"""The REST adapter (FastAPI) over ``/v1``."""
