"""Device models: NVMe and HDD drives, RAID groups, ME4 controllers. Each turns an I/O into time."""

from __future__ import annotations


def compiled() -> bool:
    """Whether the device models run as C compiled by mypyc (an installed build, ``setup.py``), not
    as their Python source: the same numbers either way, the compiled ones faster."""
    from sim.devices import drives

    return not drives.__file__.endswith(".py")
