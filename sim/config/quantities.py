"""Pydantic field types for quantities with units (``Bandwidth``, ``Size``, ...), parsed into SI floats."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field
from pydantic import BaseModel as _BaseModel

from sim.config.units import Dimension, binary_size_hint, format_bytes, parse_quantity

#: The validators that read a size in bytes (``Size``, ``ChunkSize``, mdtest's byte counts):
#: what ``sim.config.workload.workload_file`` writes back with a unit.
SIZE_VALIDATORS: set[Callable[[object], float]] = set()


def size_validator(parse: Callable[[object], float]) -> Callable[[object], float]:
    """Register ``parse`` as a validator of sizes (see :data:`SIZE_VALIDATORS`)."""
    SIZE_VALIDATORS.add(parse)
    return parse


def _parser(dimension: Dimension, allow_zero: bool = False):  # noqa: ANN202 - returns a validator
    def parse(value: object) -> float:
        return parse_quantity(value, dimension, allow_zero=allow_zero)

    return size_validator(parse) if dimension is Dimension.SIZE else parse


Size = Annotated[float, BeforeValidator(_parser(Dimension.SIZE))]
Bandwidth = Annotated[float, BeforeValidator(_parser(Dimension.BANDWIDTH))]
Duration = Annotated[float, BeforeValidator(_parser(Dimension.DURATION))]
Iops = Annotated[float, BeforeValidator(_parser(Dimension.IOPS))]
Rotation = Annotated[float, BeforeValidator(_parser(Dimension.ROTATION))]
Frequency = Annotated[float, BeforeValidator(_parser(Dimension.FREQUENCY))]


def _read_ahead(value: object) -> str | float:
    if value in ("adaptive", "stripe", "disabled"):
        return str(value)
    try:
        return parse_quantity(value, Dimension.SIZE)
    except ValueError as error:
        raise ValueError(
            f"read_ahead is 'adaptive', 'stripe', 'disabled' or a size such as '8 MiB' ({error})"
        ) from None


@size_validator
def _beegfs_chunk(value: object) -> float:
    size = parse_quantity(value, Dimension.SIZE)
    if size < 65536 or int(size) & (int(size) - 1) or size != int(size):
        raise ValueError(
            "a BeeGFS chunk size is a power of two of at least 64 KiB (STRIPEPATTERN_MIN_CHUNKSIZE), got "
            f"{format_bytes(size)}{binary_size_hint(size, lambda binary: 65536 <= binary < 2**32)}"
        )
    if size >= 2**32:
        # The stripe pattern keeps the chunk size in 32 bits (StripePattern.h; beegfs-ctl refuses
        # more than UINT32_MAX), so the largest power of two is 2 GiB.
        raise ValueError(f"a BeeGFS chunk size is stored in 32 bits: at most 2 GiB, got {size / 2**30:g} GiB")
    return size


# A BeeGFS stripe chunk size, checked as beegfs-ctl --setpattern checks it.
ChunkSize = Annotated[float, BeforeValidator(_beegfs_chunk)]
# GPFS block sizes mmcrfs accepts ("Block size must be 64K, 128K, 256K, 512K, 1M, 2M, 4M, 8M or 16M.").
GPFS_BLOCK_SIZES = tuple(float(65536 << k) for k in range(9))


# An ME4 volume's read-ahead setting: one of the named settings, or a size in bytes.
ReadAheadSetting = Annotated[str | float, BeforeValidator(_read_ahead)]
Count = Annotated[int, Field(ge=1, strict=True)]
# The most copies one topology entry may declare (clients, servers, drives, RAID groups, links):
# the largest published systems have a few hundred drives; ten million clients would exhaust memory
# before any check could run.
PartCount = Annotated[int, Field(ge=1, le=100_000, strict=True)]
# An enclosure's controllers: one, or a dual-controller array whose two mirror each other's cache.
ControllerCount = Annotated[int, Field(ge=1, le=2, strict=True)]
# The largest thread (or MPI task) count pfssim simulates: the published sweeps stop at 1,024, a
# point at 8,192 threads takes about 12 s, and far beyond this a run would exhaust time or memory.
MAX_THREADS = 65536
ThreadCount = Annotated[int, Field(ge=1, le=MAX_THREADS, strict=True)]
Index = Annotated[int, Field(ge=0, strict=True)]
Text = Annotated[str, Field(min_length=1)]


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a part, a group of parts or a workload (None when it can)."""
    if name.isprintable() and name.strip():
        return None
    return (
        f"a name is printable text, without control, format or line-break characters (newlines, tabs, "
        f"U+2028 ...) and not blank, got {name!r}: names are printed in tables, dotted part names and "
        "one-line problem reports"
    )


def _printable_name(name: str) -> str:
    problem = name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


# The name of a part, a group of parts or a workload: text without control characters.
Name = Annotated[str, Field(min_length=1), AfterValidator(_printable_name)]


def _component_name(name: str) -> str:
    for mark, role in (
        (".", "joins the dotted names of parts (storage3.numa1.hca0)"),
        ("->", "names a pool between two parts (client0->meta0)"),
    ):
        if mark in name:
            raise ValueError(
                f"a part's name may not contain {mark!r}, which {role} in results and errors, got {name!r}"
            )
    if any(c.isspace() for c in name):
        raise ValueError(
            f"a part's name may not contain spaces: it is one piece of a dotted name, which target patterns, "
            f"results and errors give as one word, got {name!r}"
        )
    # A count's names put the index where {i} is; any other brace pair would stay in every name.
    if any(c in name.replace("{i}", "") for c in "{}"):
        raise ValueError(f"{{i}} is the only placeholder of a name (the index of a count), got {name!r}")
    # Target patterns (me4084-*.vd[0-3]) match names as shell globs: a name with glob characters
    # could not be named by one alone.
    if any(c in name for c in "*?[]"):
        raise ValueError(f"a part's name may not contain *, ?, [ or ], which target patterns match with, got {name!r}")
    return name


def _one_part_name(name: str) -> str:
    if "{i}" in name:
        raise ValueError(f"{{i}} numbers the parts of a count, and this part is declared alone: got {name!r}")
    return name


# The name (or name pattern) of a server, client, enclosure, switch or a part inside them: a Name
# that is one piece of a dotted name.
ComponentName = Annotated[Name, AfterValidator(_component_name)]
# The name of a part declared alone (a fabric switch): no {i}, which only a count fills in.
SingleComponentName = Annotated[ComponentName, AfterValidator(_one_part_name)]


class Model(_BaseModel):
    """Base of every schema: unknown keys are errors, values are immutable once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# A yes/no setting: YAML's true or false; yes, no, on, off (text to pfssim's YAML reader), a quoted
# "true" or a 1 is refused rather than read as a boolean.
Flag = Annotated[bool, Field(strict=True)]
