"""Rendering result objects for people: rich tables and JSON."""
