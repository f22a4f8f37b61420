"""The hardware graph: building a system from its spec, capacity, and max-flow bounds."""
