"""Accounts: projects (tenants) with their API keys, and Memory Engine spaces."""
