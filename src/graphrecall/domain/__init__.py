"""Types shared by every layer. No I/O here."""
