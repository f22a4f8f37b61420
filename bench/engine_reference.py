"""How fast plain SimPy runs on this machine today: the reference network of engine-speed.md.

``../shared/research/engine-speed.md`` measured SimPy 4.1 on a closed network of three stations
in series (four servers each, exponential services of 1.0, 0.8 and 0.6 ms, no think time):
63,500 completed requests per second with 1024 clients. The machine's speed varies from day to
day (a shared host), so pfssim's own requests per second mean little alone; measured beside
this network on the same day, their ratio does not depend on the day, and scaling by it gives
what pfssim would do on the machine the research note measured.
"""

from __future__ import annotations

import random
import time

import simpy

REFERENCE_RATE = 63_500.0  # req/s at 1024 clients, engine-speed.md (2 vCPU EPYC, CPython 3.11.7)
_MEANS = (1.0e-3, 0.8e-3, 0.6e-3)


def reference_rate(clients: int = 1024, requests: int = 100_000, seed: int = 1) -> float:
    """Completed requests per wall second of the reference network with ``clients`` clients."""
    env = simpy.Environment()
    draw = random.Random(seed)
    stations = [simpy.Resource(env, capacity=4) for _ in _MEANS]
    completed = 0

    def client():  # type: ignore[no-untyped-def]
        nonlocal completed
        while True:
            for station, mean in zip(stations, _MEANS, strict=True):
                with station.request() as turn:
                    yield turn
                    yield env.timeout(draw.expovariate(1.0 / mean))
            completed += 1

    for _ in range(clients):
        env.process(client())
    started = time.perf_counter()
    while completed < requests:
        env.step()
    return completed / (time.perf_counter() - started)


if __name__ == "__main__":
    rate = reference_rate()
    print(f"SimPy reference network, 1024 clients: {rate:,.0f} req/s (engine-speed.md: {REFERENCE_RATE:,.0f})")
