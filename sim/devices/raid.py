"""RAID groups: mapping a group I/O to member I/Os (RAID 0, 1, 10, 5, 6).

Addresses are striped in ``stripe_unit`` chunks. RAID0 deals chunks over all members; RAID1
mirrors; RAID10 stripes over mirrored pairs. RAID5/6 rotate parity (stripe s puts its parity on
members s, s+1 mod n and data chunk j on member (s + p + j) mod n). Writes that cover whole stripes
write data and parity without reading; partial stripes do read-modify-write: read the old data
and parity of the touched byte range, then write both (RAID6 small write: 3 reads + 3 writes).
Reads of RAID1/10 go to the less loaded member (fewer commands outstanding on an HDD, fewer
seconds of booked work on an SSD). Pieces for the same member
that are contiguous on it are merged into one command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import simpy
from simpy.events import Event

from sim.devices.drives import HddDrive, SsdDrive
from sim.engine.core import join, on_done, when_all

Member = SsdDrive | HddDrive
Piece = tuple[int, float, float]  # member index, member offset, length


def _merge(pieces: list[Piece]) -> list[Piece]:
    merged: dict[int, list[list[float]]] = {}
    for member, offset, length in pieces:
        runs = merged.setdefault(member, [])
        if runs and abs(runs[-1][0] + runs[-1][1] - offset) < 1e-6:
            runs[-1][1] += length
        else:
            runs.append([offset, length])
    return [(m, o, ln) for m, runs in merged.items() for o, ln in runs]


class RaidDevice:
    """A RAID group of member devices."""

    def __init__(
        self, env: simpy.Environment, name: str, level: int, members: Sequence[Member], stripe_unit: float
    ) -> None:
        self.env = env
        self.name = name
        self.level = level
        self.members = list(members)
        self.n = len(members)
        self.su = stripe_unit
        self.parity = {5: 1, 6: 2}.get(level, 0)
        self.data = {0: self.n, 1: 1, 10: self.n // 2}.get(level, self.n - self.parity)
        self.capacity = self.data * members[0].capacity
        self.bytes = {"read": 0.0, "write": 0.0}
        # Without read-modify-write phases and with no HDD (whose order depends on later arrivals),
        # a group I/O's end is known at submission: the latest of its member I/Os.
        self.computable = level in (0, 1, 10) and all(isinstance(m, SsdDrive) for m in members)
        self._split: dict[tuple[float, float], list[Piece]] = {}
        self._reads: dict[tuple[float, float], list[Piece]] = {}  # parity RAID reads, see _read_pieces

    def member_commands(self, op: str, size: float) -> int:
        """Drive commands one aligned group I/O of ``size`` bytes costs (reads and writes)."""
        if op == "read":
            return max(1, min(self.data, int(-(-size // self.su))))
        if self.level == 0:
            return max(1, min(self.n, int(-(-size // self.su))))
        if self.level in (1, 10):
            return 2 * max(1, min(self.n // 2, int(-(-size // self.su))))
        width = self.data * self.su
        if size >= width:
            return self.n * int(size // width)
        return 2 * (1 + self.parity)  # read-modify-write of one chunk: data + parity, read then written

    def finish_time(self, op: str, offset: float, size: float) -> float:
        """When an I/O submitted now completes (only for ``computable`` groups)."""
        self.bytes[op] += size
        if self.level == 0:
            su = self.su
            width = self.n * su
            row = offset // width
            in_stripe = offset - row * width
            chunk = int(in_stripe // su)
            within = in_stripe - chunk * su
            base = row * su
            if within + size <= su + 1e-6:  # within one chunk: one member (small random I/O, hot path)
                return self.members[chunk].finish_time(op, base + within, size)  # type: ignore[union-attr]
            # The split depends only on the offset within a full stripe: memoise it while the
            # offsets repeat (aligned records); unaligned ones would only grow the table.
            key = (in_stripe, size)
            pattern = self._split.get(key)
            if pattern is None:
                pattern = self._stripe(in_stripe, size, self.n, lambda c: (c % self.n, c // self.n))
                if len(self._split) < 4096:
                    self._split[key] = pattern
            end = 0.0
            for m, o, ln in pattern:
                finish = self.members[m].finish_time(op, base + o, ln)  # type: ignore[union-attr]
                if finish > end:
                    end = finish
            return end
        if self.level == 1:
            # _mirror_pieces of the one piece, unrolled (every metadata update of a mirrored MDT):
            # a write goes to both members in order, a read to the less loaded one.
            a, b = self.members[0], self.members[1]
            if op == "write":
                first = a.finish_time(op, offset, size)  # type: ignore[union-attr]
                second = b.finish_time(op, offset, size)  # type: ignore[union-attr]
                return second if second > first else first  # max(), which keeps the first of equals
            pick = a if a.pending <= b.pending else b
            return pick.finish_time(op, offset, size)  # type: ignore[union-attr]
        else:
            pairs = self.n // 2
            pieces = self._stripe(offset, size, pairs, lambda c: (c % pairs, c // pairs))
            chosen = self._mirror_pieces(op, pieces, [(2 * p, 2 * p + 1) for p in range(pairs)])
        return max(self.members[m].finish_time(op, o, ln) for m, o, ln in chosen)  # type: ignore[union-attr]

    def io(self, op: str, offset: float, size: float) -> Event:
        """Group I/O -> member I/Os, joined."""
        if self.computable:
            return self.env.timeout(self.finish_time(op, offset, size) - self.env.now)
        self.bytes[op] += size
        if self.level == 0:
            return self._submit(op, self._stripe(offset, size, self.n, lambda c: (c % self.n, c // self.n)))
        if self.level == 1:
            return self._mirror(op, [(0, offset, size)], pairs=[(0, 1)])
        if self.level == 10:
            pairs = self.n // 2
            pieces = self._stripe(offset, size, pairs, lambda c: (c % pairs, c // pairs))
            return self._mirror(op, pieces, pairs=[(2 * p, 2 * p + 1) for p in range(pairs)])
        return self._parity_io(op, offset, size)

    def _stripe(self, offset: float, size: float, width: int, where) -> list[Piece]:  # noqa: ANN001
        pieces: list[Piece] = []
        end = offset + size
        pos = offset
        while pos < end - 1e-9:
            chunk = int(pos // self.su)
            within = pos - chunk * self.su
            length = min(self.su - within, end - pos)
            member, row = where(chunk)
            pieces.append((member, row * self.su + within, length))
            pos += length
        return _merge(pieces)

    def _submit(self, op: str, pieces: list[Piece]) -> Event:
        return join(self.env, [self.members[m].io(op, o, ln) for m, o, ln in pieces])

    def _mirror_pieces(self, op: str, pieces: list[Piece], pairs: list[tuple[int, int]]) -> list[Piece]:
        chosen: list[Piece] = []
        for pair_index, offset, length in pieces:
            a, b = pairs[pair_index] if len(pairs) > 1 else pairs[0]
            if op == "write":
                chosen += [(a, offset, length), (b, offset, length)]
            else:
                pick = a if self.members[a].pending <= self.members[b].pending else b
                chosen.append((pick, offset, length))
        return chosen

    def _mirror(self, op: str, pieces: list[Piece], pairs: list[tuple[int, int]]) -> Event:
        return self._submit(op, self._mirror_pieces(op, pieces, pairs))

    def _data_member(self, stripe: int, j: int) -> int:
        return (stripe + self.parity + j) % self.n

    def _parity_io(self, op: str, offset: float, size: float) -> Event:
        if op == "read":
            return self._submit("read", self._read_pieces(offset, size))
        done = Event(self.env)
        self._parity_write(offset, size, done.succeed)
        return done

    def write_then(self, offset: float, size: float, action: Callable[[], object]) -> None:
        """Write to the group and run ``action()`` when the write has ended (on parity RAID inside
        the callbacks of the member write that ends it, without an event of the group's own)."""
        if self.parity and not self.computable:
            self._parity_write(offset, size, action)
        else:
            on_done(self.io("write", offset, size), action)

    def _parity_write(self, offset: float, size: float, action: Callable[[], object]) -> None:
        """Whole stripes written with their parity, partial stripes by read-modify-write; ``action()``
        runs as the last of them ends."""
        width = self.data * self.su
        end = offset + size
        full: list[Piece] = []
        partial: list[tuple[int, float, float]] = []  # stripe, start within stripe, length
        pos = offset
        while pos < end - 1e-9:
            stripe = int(pos // width)
            start = pos - stripe * width
            length = min(width - start, end - pos)
            if start == 0 and length >= width - 1e-9:
                for member in range(self.n):
                    full.append((member, stripe * self.su, self.su))
            else:
                partial.append((stripe, start, length))
            pos += length
        remaining = (1 if full else 0) + len(partial)
        if not remaining:  # nothing to write (as join([]) fires at once)
            action()
            return

        def ended() -> None:
            nonlocal remaining
            remaining -= 1
            if not remaining:
                action()

        if full:
            members = self.members
            when_all([members[m].io("write", o, ln) for m, o, ln in _merge(full)], ended)
        for stripe, start, length in partial:
            self._read_modify_write(stripe, start, length, ended)

    def _read_pieces(self, offset: float, size: float) -> list[Piece]:
        """The member pieces of a parity RAID read: the data chunks it covers, merged per member.

        The parity rotates with period ``n`` stripes, so a read's pieces are those of the read at
        the same place in its cycle of ``n`` stripes, moved by the cycle's ``n`` chunks on each
        member. They are memoised by (place in the cycle, size) while the offsets repeat (a few
        record alignments). Only for whole-byte offsets, sizes and stripe units: every step of
        the split is then an integer below 2**53, exact in floats, so moving a memoised split
        gives the very numbers the split itself would."""
        k, su = self.data, self.su

        def where(c: int) -> tuple[int, int]:
            return self._data_member(c // k, c % k), c // k

        if offset % 1.0 or size % 1.0 or su % 1.0:
            return self._stripe(offset, size, k, where)
        cycle = self.n * k * su
        turn = offset // cycle
        key = (offset - turn * cycle, size)
        pattern = self._reads.get(key)
        if pattern is None:
            pattern = self._stripe(key[0], size, k, where)
            if len(self._reads) < 4096:
                self._reads[key] = pattern
        if not turn:
            return pattern
        shift = turn * self.n * su
        return [(m, shift + o, ln) for m, o, ln in pattern]

    def _read_modify_write(self, stripe: int, start: float, length: float, action: Callable[[], object]) -> None:
        """Read old data and parity of the touched range, then write new data and parity; then
        ``action()``."""
        k = self.data
        data: list[Piece] = []
        lo, hi = self.su, 0.0
        pos = start
        while pos < start + length - 1e-9:
            j = int(pos // self.su)
            within = pos - j * self.su
            run = min(self.su - within, start + length - pos)
            data.append((self._data_member(stripe, j % k), stripe * self.su + within, run))
            lo, hi = min(lo, within), max(hi, within + run)
            pos += run
        parity = [((stripe + p) % self.n, stripe * self.su + lo, hi - lo) for p in range(self.parity)]
        pieces = _merge(data + parity)
        # The writes start as the last read ends, inside its callbacks: the reads' join and the
        # stage between them would be two events at that same moment that change nothing.
        members = self.members

        def write() -> None:
            when_all([members[m].io("write", o, ln) for m, o, ln in pieces], action)

        when_all([members[m].io("read", o, ln) for m, o, ln in pieces], write)
