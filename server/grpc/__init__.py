"""The gRPC adapter: servicers, interceptors, conversion, health and reflection."""
