"""The read side: read_context's request, selection, recall, ranking and packing; evaluation."""
