"""Benchmark definitions: shipped workload files and real IOzone / IOR command lines, as :class:`Workload` objects."""
