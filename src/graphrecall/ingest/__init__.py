"""Turning raw input into indexed graph data: embedding now, extraction later."""
