"""Configuration: units, YAML with line numbers, schemas of topologies and parts, loading."""
