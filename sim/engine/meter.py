"""Counting completed work (bytes or operations) and waking the driver at batch boundaries."""

from __future__ import annotations

import simpy
from simpy.events import Event


class Meter:
    """Completions of one measured quantity, with an optional wake-up after ``n`` more completions.

    A model whose consumer takes its work from a bounded buffer filled ahead of it may also record
    that buffer's supply (``by_supply``): the same long-run rate, without the consumer's bursts.
    ``consumers`` names the stations that do the consumer's own work (its copies out of the buffer).
    """

    __slots__ = (
        "env",
        "amount",
        "count",
        "_target",
        "_event",
        "per_thread",
        "by_supply",
        "supplied",
        "supplied_per_thread",
        "consumers",
    )

    def __init__(self, env: simpy.Environment, threads: int) -> None:
        self.env = env
        self.amount = 0.0
        self.count = 0
        self._target = -1
        self._event: Event | None = None
        self.per_thread = [0.0] * threads
        self.by_supply = False
        self.supplied = 0.0
        self.supplied_per_thread = [0.0] * threads
        self.consumers: set[str] = set()  # stations that do the consumer's own work, not the supply's

    def supply(self, thread: int, amount: float) -> None:
        """Record work that reached the bounded buffer ahead of the consumer."""
        self.supplied += amount
        self.supplied_per_thread[thread] += amount

    def progress(self, thread: int, amount: float) -> None:
        """Record part of a request's work done before the request completes (its ``add`` then
        records the rest): the amount moves with the work as it is done, the count with requests."""
        self.amount += amount
        self.per_thread[thread] += amount

    def add(self, thread: int, amount: float) -> None:
        """Record one completed request of ``amount``."""
        self.amount += amount
        self.count += 1
        self.per_thread[thread] += amount
        if self.count == self._target and self._event is not None:
            event, self._event = self._event, None
            event.succeed()

    def after(self, completions: int) -> Event:
        """An event that fires when ``completions`` more requests have completed."""
        self._target = self.count + completions
        self._event = Event(self.env)
        return self._event
