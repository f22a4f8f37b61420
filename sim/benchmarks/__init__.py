"""Benchmarks: workloads (shipped files and real IOzone / IOR / mdtest command lines), the point
driver, default suites, IOR's and mdtest's last-task rule, and the versioned result object."""
