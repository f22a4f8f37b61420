"""pfssim: a simulator that predicts parallel-file-system benchmark results from a hardware topology.

The import package is ``sim``; the distribution and command are ``pfssim``.
"""

__version__ = "0.1.0"
