"""Generated protobuf and gRPC modules (do not edit; regenerate with scripts/gen_proto.py)."""
