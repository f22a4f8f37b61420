"""The simulation kernel glue: queueing stations, pools, fork-join, RNG streams, statistics.

Nothing here knows about files, targets or benchmarks.
"""
