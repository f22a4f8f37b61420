"""Validation harness: the published datasets (``validation/``), scoring of predictions against them, reports.

``dataset`` reads the data, ``shapes`` holds the executable shape checks, ``score`` compares curves
with published points, ``run`` simulates what the data needs and scores it (``reproduce``),
``figures`` and ``report`` render the result. The CLI (``pfssim reproduce``) only renders.
"""
