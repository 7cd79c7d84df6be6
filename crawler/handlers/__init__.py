"""Download handlers."""
