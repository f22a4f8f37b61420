"""Units are parsed once at the boundary: round-trips, prefixes and refusals."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.config.units import PLAUSIBLE, Dimension, UnitError, format_quantity, parse_quantity

BANDWIDTH_UNITS = {
    "B/s": 1,
    "kB/s": 1e3,
    "MB/s": 1e6,
    "GB/s": 1e9,
    "MiB/s": 2**20,
    "GiB/s": 2**30,
    "Gb/s": 1e9 / 8,
    "Mb/s": 1e6 / 8,
}
SIZE_UNITS = {
    "B": 1,
    "kB": 1e3,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "KiB": 1024,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize(
    ("text", "dimension", "expected"),
    [
        ("12.4 GB/s", Dimension.BANDWIDTH, 12.4e9),
        ("100 Gb/s", Dimension.BANDWIDTH, 12.5e9),
        ("100 Gbps", Dimension.BANDWIDTH, 12.5e9),
        ("2 MiB", Dimension.SIZE, 2 * 2**20),
        ("1.6 TB", Dimension.SIZE, 1.6e12),
        ("85 us", Dimension.DURATION, 85e-6),
        ("7200 rpm", Dimension.ROTATION, 120.0),
        ("3.6M IOPS", Dimension.IOPS, 3.6e6),
        ("176500 IOPS", Dimension.IOPS, 176500.0),
        ("2.9 GHz", Dimension.FREQUENCY, 2.9e9),
    ],
)
def test_examples(text: str, dimension: Dimension, expected: float) -> None:
    assert parse_quantity(text, dimension) == pytest.approx(expected, rel=1e-12)


@given(value=positive, unit=st.sampled_from(sorted(BANDWIDTH_UNITS)))
def test_bandwidth_round_trip(value: float, unit: str) -> None:
    _round_trip(f"{value!r} {unit}", Dimension.BANDWIDTH, value * BANDWIDTH_UNITS[unit])


@given(value=positive, unit=st.sampled_from(sorted(SIZE_UNITS)))
def test_size_round_trip(value: float, unit: str) -> None:
    text = f"{value!r} {unit}"
    if value * SIZE_UNITS[unit] > 2**53:  # beyond exact byte offsets: refused, saying why
        with pytest.raises(UnitError, match="2\\^53"):
            parse_quantity(text, Dimension.SIZE)
        return
    assert parse_quantity(text, Dimension.SIZE) == pytest.approx(value * SIZE_UNITS[unit], rel=1e-12)


@given(value=positive, unit=st.sampled_from(sorted(DURATION_UNITS)))
def test_duration_round_trip(value: float, unit: str) -> None:
    _round_trip(f"{value!r}{unit}", Dimension.DURATION, value * DURATION_UNITS[unit])  # no space is fine too


def _round_trip(text: str, dimension: Dimension, want: float) -> None:
    """``text`` reads as ``want``, or, beyond the range any hardware figure has, is refused saying so."""
    low, high, _, _ = PLAUSIBLE[dimension]
    if not low * (1 - 1e-12) <= want <= high * (1 + 1e-12):
        with pytest.raises(UnitError, match="outside what pfssim can simulate"):
            parse_quantity(text, dimension)
        return
    if not low * (1 + 1e-12) <= want <= high * (1 - 1e-12):
        return  # at the edge, rounding decides
    assert parse_quantity(text, dimension) == pytest.approx(want, rel=1e-12)


@given(value=st.floats(min_value=1e-6, max_value=1e15), dimension=st.sampled_from(list(Dimension)))
def test_format_then_parse_is_identity(value: float, dimension: Dimension) -> None:
    text = format_quantity(value, dimension, digits=12)
    if dimension is Dimension.IOPS:
        text = text.replace("K IOPS", "k IOPS")
    if dimension in PLAUSIBLE:
        low, high, _, _ = PLAUSIBLE[dimension]
        value = min(max(value, low * 1.001), high * 0.999)
        text = format_quantity(value, dimension, digits=12)
        if dimension is Dimension.IOPS:
            text = text.replace("K IOPS", "k IOPS")
    assert math.isclose(parse_quantity(text, dimension), value, rel_tol=1e-9)


@pytest.mark.parametrize(
    ("text", "dimension"),
    [
        ("1e307 s", Dimension.DURATION),
        ("100000 s", Dimension.DURATION),
        ("1e-320 GB/s", Dimension.BANDWIDTH),
        ("1e-9 GB/s", Dimension.BANDWIDTH),
        ("1e-320 IOPS", Dimension.IOPS),
        ("1e300 IOPS", Dimension.IOPS),
    ],
)
def test_implausible_hardware_figures_are_refused(text: str, dimension: Dimension) -> None:
    # Figures like these pass a unit check but stall or overflow the simulation clock.
    with pytest.raises(UnitError, match="outside what pfssim can simulate"):
        parse_quantity(text, dimension)


@pytest.mark.parametrize(
    ("value", "dimension", "fragment"),
    [
        (1300, Dimension.BANDWIDTH, "has no unit"),
        ("1300", Dimension.BANDWIDTH, "cannot read"),
        ("-1.3 GB/s", Dimension.BANDWIDTH, "must be positive"),
        ("0 GB/s", Dimension.BANDWIDTH, "must be positive"),
        ("3 GB", Dimension.BANDWIDTH, "unknown bandwidth unit"),
        ("3 GB/s", Dimension.SIZE, "unknown size unit"),
        ("fast", Dimension.DURATION, "cannot read"),
        (True, Dimension.SIZE, "expected a size"),
        (None, Dimension.SIZE, "expected a size"),
        ("1e999 GB/s", Dimension.BANDWIDTH, "not a finite quantity"),  # float() overflows to inf
        ("1e400 us", Dimension.DURATION, "not a finite quantity"),
        ("1e16 B", Dimension.SIZE, "more than 2"),
    ],
)
def test_refusals(value: object, dimension: Dimension, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        parse_quantity(value, dimension)


@pytest.mark.parametrize("text", ["１ MiB", "١ MiB", "1\u00a0MiB"])
def test_only_ascii_digits_and_spaces(text: str) -> None:
    # As the command lines are read: a full-width digit or a no-break space is refused, not read.
    with pytest.raises(UnitError, match="cannot read"):
        parse_quantity(text, Dimension.SIZE)


def test_sizes_in_messages_are_exact_in_the_largest_whole_unit() -> None:
    from sim.config.units import format_bytes

    assert format_bytes(3 * 2**20) == "3 MiB"
    assert format_bytes(1536 * 2**10) == "1536 KiB"
    assert format_bytes(2**30) == "1 GiB"
    assert format_bytes(1000) == "1 kB" and format_bytes(1e12) == "1 TB"  # a size given in decimal units
    assert format_bytes(357913941) == "357913941 B"
    assert format_bytes(0.5) == "0.5 B" and format_bytes(2**30 / 3) == "357913941.3 B"


def test_large_counts_read_as_words() -> None:
    from sim.report.show import _count

    assert [_count(n) for n in (3.84e9, 5.12e8, 40_000, 7)] == ["3.84 billion", "512 million", "40,000", "7"]


def test_a_decimal_size_meant_as_a_power_of_two_is_told_the_binary_one_only_when_it_would_do() -> None:
    from sim.config.quantities import _beegfs_chunk
    from sim.config.units import binary_size_hint

    assert binary_size_hint(512e3).endswith("the power of two is written 512 KiB")
    assert binary_size_hint(1e6).endswith("the power of two is written 1 MiB")
    assert binary_size_hint(500e3) == ""  # 500 KiB is no power of two
    assert binary_size_hint(32e3, lambda binary: binary >= 65536) == ""  # below BeeGFS's 64 KiB minimum
    for written, hinted in (("1 MB", True), ("64 KB", True), ("32 KB", False)):
        with pytest.raises(ValueError) as info:
            _beegfs_chunk(written)
        assert ("the power of two is written" in str(info.value)) == hinted, written
