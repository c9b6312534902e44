"""get_context: what a context request retrieves, how candidates rank, and the block written."""
