"""Read side: chunks, the keyword index port and its Whoosh implementation, read_context."""
