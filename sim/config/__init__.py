"""Configuration: units, YAML with line numbers, schemas of topologies, parts and workloads, loading."""
