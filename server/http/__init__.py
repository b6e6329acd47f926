"""What every HTTP listener applies: Host/Origin checks and request limits."""
