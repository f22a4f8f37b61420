"""Rendering result objects for people: rich tables and plots, and all-or-none output files (JSON
comes from each result object's ``to_json``)."""
