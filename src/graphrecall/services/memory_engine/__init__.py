"""Memory Engine face: a space's memories, their writes, search, subtrees and history."""
