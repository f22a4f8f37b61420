"""Quantities as people write them (``12.4 GB/s``, ``100 Gb/s``, ``2 MiB``, ``85 us``) parsed into SI floats.

This is the only place where unit strings are understood. Inside pfssim every quantity is a float in
bytes, bytes per second, seconds, operations per second, revolutions per second or hertz; the report
layer formats them back (:func:`format_quantity`).

Decimal prefixes are powers of 1000 and binary prefixes powers of 1024, exactly. ``b`` is a bit and
``B`` a byte, so ``100 Gb/s`` is 12.5e9 bytes/s; sizes must be given in bytes (``16 Tb`` is refused,
being almost always a typo for ``16 TB``). ``KB`` is accepted as a synonym of ``kB`` (1000 B),
as storage datasheets write it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum


class Dimension(StrEnum):
    """What a quantity measures; each has one SI base unit inside pfssim."""

    SIZE = "size"  # bytes
    BANDWIDTH = "bandwidth"  # bytes per second
    DURATION = "duration"  # seconds
    IOPS = "iops"  # operations per second
    ROTATION = "rotation"  # revolutions per second
    FREQUENCY = "frequency"  # hertz


class UnitError(ValueError):
    """A quantity string that cannot be read as the expected dimension."""


_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}


def _size_units() -> dict[str, float]:
    units: dict[str, float] = {}
    for prefix, factor in _DECIMAL.items():
        units[f"{prefix}B"] = factor
        units[f"{prefix}b"] = factor / 8.0
    for prefix, factor in _BINARY.items():
        units[f"{prefix}B"] = factor
        units[f"{prefix}b"] = factor / 8.0
    units["bytes"] = 1.0
    units["byte"] = 1.0
    return units


_SIZE = _size_units()
_DURATION = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_IOPS = {"IOPS": 1.0, "op/s": 1.0, "ops/s": 1.0}
_ROTATION = {"rpm": 1.0 / 60.0}
_FREQUENCY = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}
_COUNT_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(  # ASCII digits and spaces only, as the command lines are read
    rf"^\s*({_NUMBER})\s*([kKMG]?)\s+([A-Za-zµ/]+)\s*$|^\s*({_NUMBER})\s*([A-Za-zµ/]+)\s*$", re.ASCII
)

_EXAMPLES = {
    Dimension.SIZE: "'2 MiB', '1.6 TB' or '4096 B'",
    Dimension.BANDWIDTH: "'12.4 GB/s', '100 Gb/s' or '250 MB/s'",
    Dimension.DURATION: "'85 us', '8.2 ms' or '3 s'",
    Dimension.IOPS: "'176500 IOPS' or '3.6M IOPS'",
    Dimension.ROTATION: "'7200 rpm'",
    Dimension.FREQUENCY: "'2.9 GHz'",
}


def _lookup(dimension: Dimension, unit: str) -> float | None:
    if dimension is Dimension.SIZE:
        return _SIZE.get(unit)
    if dimension is Dimension.BANDWIDTH:
        if unit.endswith("/s") and unit[:-2] in _SIZE:
            return _SIZE[unit[:-2]]
        if unit.endswith("ps") and unit[:-2] in ("Gb", "Mb", "Kb", "kb", "Tb"):
            return _SIZE[unit[:-2]]  # '100 Gbps'
        return None
    if dimension is Dimension.DURATION:
        return _DURATION.get(unit)
    if dimension is Dimension.IOPS:
        return _IOPS.get(unit)
    if dimension is Dimension.ROTATION:
        return _ROTATION.get(unit)
    return _FREQUENCY.get(unit)


def parse_quantity(value: object, dimension: Dimension, *, allow_zero: bool = False) -> float:
    """Return ``value`` as an SI float of ``dimension``; raise :class:`UnitError` saying why not.

    A bare number is refused: a rate without a unit is the commonest silent mistake in a topology.
    """
    if isinstance(value, bool) or value is None:
        raise UnitError(f"expected a {dimension.value} such as {_EXAMPLES[dimension]}, got {value!r}")
    if isinstance(value, int | float):
        raise UnitError(f"{value!r} has no unit; write it with one, e.g. {_EXAMPLES[dimension]}")
    if not isinstance(value, str):
        raise UnitError(f"expected a {dimension.value} such as {_EXAMPLES[dimension]}, got {value!r}")
    match = _QUANTITY.match(value)
    if match is None:
        article = "an" if dimension.value[0] in "aeiou" else "a"
        raise UnitError(f"cannot read {value!r} as {article} {dimension.value}; write e.g. {_EXAMPLES[dimension]}")
    if match.group(1) is not None:
        number, multiplier, unit = match.group(1), match.group(2), match.group(3)
    else:
        number, multiplier, unit = match.group(4), "", match.group(5)
    factor = _lookup(dimension, unit)
    if dimension is Dimension.SIZE and factor is not None and unit.endswith("b"):
        raise UnitError(
            f"{value!r} is in bits ('b'); sizes are bytes: write e.g. '{number} {multiplier}{unit[:-1]}B' "
            "(bits are for link rates such as '100 Gb/s')"
        )
    if factor is None:
        raise UnitError(f"unknown {dimension.value} unit {unit!r} in {value!r}; write e.g. {_EXAMPLES[dimension]}")
    if multiplier and dimension is not Dimension.IOPS:
        raise UnitError(f"cannot read {value!r}: put the prefix on the unit, e.g. {_EXAMPLES[dimension]}")
    result = float(number) * _COUNT_SUFFIX[multiplier] * factor
    if result < 0 or (result == 0 and not allow_zero):
        raise UnitError(f"{value!r} must be {'non-negative' if allow_zero else 'positive'}")
    if result != result or result in (float("inf"), float("-inf")):
        raise UnitError(f"{value!r} is not a finite quantity")
    if dimension is Dimension.SIZE and result > MAX_SIZE:
        raise UnitError(f"{value!r} is more than 2^53 B (9 PB), beyond which byte offsets are not exact")
    if dimension in PLAUSIBLE and result > 0:
        low, high, low_text, high_text = PLAUSIBLE[dimension]
        if not low <= result <= high:
            raise UnitError(
                f"{value!r} is outside what pfssim can simulate for a {dimension.value} "
                f"({low_text} to {high_text}); no storage hardware comes near it"
            )
    return result


# The range of hardware figures the engine's float clock handles: a time beyond a day or a rate
# below a kilobyte per second would put event times past what a run can reach (or overflow them),
# and these bounds are orders of magnitude beyond any part a storage system is built from.
PLAUSIBLE = {
    Dimension.DURATION: (1e-12, 86400.0, "1 ps", "1 day"),
    Dimension.BANDWIDTH: (1e3, 1e15, "1 kB/s", "1 PB/s"),
    Dimension.IOPS: (1.0, 1e10, "1 IOPS", "10G IOPS"),
    Dimension.FREQUENCY: (1e6, 1e11, "1 MHz", "100 GHz"),
    Dimension.ROTATION: (1.0 / 60.0, 1e6 / 60.0, "1 rpm", "1M rpm"),
}


# The largest size pfssim takes: doubles hold every whole number of bytes up to 2^53, and file
# offsets must stay exact (a 1 MiB step added to 10^24 would vanish).
MAX_SIZE = float(2**53)


_FORMAT_STEPS = {
    Dimension.SIZE: [
        (2.0**50, "PiB"),
        (2.0**40, "TiB"),
        (2.0**30, "GiB"),
        (2.0**20, "MiB"),
        (2.0**10, "KiB"),
        (1.0, "B"),
    ],
    Dimension.BANDWIDTH: [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")],
    Dimension.DURATION: [(1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")],
    Dimension.IOPS: [(1e6, "M IOPS"), (1e3, "K IOPS"), (1.0, "IOPS")],
    Dimension.ROTATION: [(1.0 / 60.0, "rpm")],
    Dimension.FREQUENCY: [(1e9, "GHz"), (1e6, "MHz"), (1.0, "Hz")],
}


def format_quantity(value: float, dimension: Dimension, digits: int = 4) -> str:
    """Format an SI float for people, choosing the largest unit that keeps the number >= 1."""
    steps = _FORMAT_STEPS[dimension]
    for factor, unit in steps:
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {unit}"
    factor, unit = steps[-1]
    return f"{value / factor:.{digits}g} {unit}"


def format_bytes(value: float) -> str:
    """A size in a message, exactly, in the unit that writes it shortest: a binary one (``3 MiB``,
    ``1536 KiB``) or a decimal one (``1 TB``, as a size given in TB is written) it is a whole number
    of, or else bytes (``1000 B``, ``0.5 B``)."""
    if value != int(value):  # a share that does not come out whole (1 GiB over 3 tasks)
        return f"{value:.1f} B" if value >= 1 else f"{value:g} B"
    decimal = [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
    written = [f"{value:.0f} B"]
    for factor, unit in [*_FORMAT_STEPS[Dimension.SIZE][:-1], *decimal]:
        if value >= factor and value % factor == 0:
            written.append(f"{value / factor:.0f} {unit}")
    return min(written, key=len)


def binary_size_hint(value: float, accepted: Callable[[float], bool] = lambda _size: True) -> str:
    """For a size that must be a power of two and was written with a decimal prefix (``512 KB``,
    ``1 MB``: powers of 1000), a hint naming the binary one meant (``512 KiB``) when that one is a
    power of two that ``accepted`` takes (the rule the size failed); else ""."""
    for factor, decimal, binary, power in (
        (1e3, "KB", "KiB", 2**10),
        (1e6, "MB", "MiB", 2**20),
        (1e9, "GB", "GiB", 2**30),
    ):
        count = value / factor
        meant = count * power
        if count == int(count) and count >= 1 and int(meant) & (int(meant) - 1) == 0 and accepted(meant):
            return (
                f"; {count:g} {decimal} is {value:,.0f} bytes (kB, MB and GB count in powers of 1000): "
                f"the power of two is written {count:g} {binary}"
            )
    return ""


def format_decimal_bytes(value: float, digits: int = 5) -> str:
    """Bytes with decimal prefixes (TB, PB), as capacity is quoted in datasheets."""
    for factor, unit in [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]:
        if value >= factor:
            return f"{value / factor:.{digits}g} {unit}"
    return f"{value:.{digits}g} B"
