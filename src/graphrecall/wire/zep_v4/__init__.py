"""The Zep v4 face's shapes: bodies, wire models, paging rules and record converters."""
