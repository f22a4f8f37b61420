"""Schema of a workload file (``workloads/*.yaml``): one benchmark run as its document ran it.

A workload is what a benchmark command line means, resolved into the quantities the model needs
(record size, file size per thread, O_DIRECT, operations, thread counts). ``sim.benchmarks.cmdline``
turns real IOzone and IOR command lines into the same object.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from sim.config.quantities import Count, Model, Size, Text

Op = Literal["write", "read", "random_write", "random_read"]
Benchmark = Literal["iozone_seq_nn", "iozone_random_nn", "ior_seq_n1", "ior_seq_nn"]


class StripeOverride(Model):
    """File-system striping the benchmark's directory was set to (e.g. ``beegfs-ctl --setpattern``)."""

    num_targets: Count | None = None
    chunk_size: Size | None = None


class Workload(Model):
    """One benchmark definition; ``threads`` is the sweep of thread (or MPI task) counts.

    Sizes: give ``file_size`` (bytes per thread, IOzone ``-s`` / IOR ``-b`` x ``-s``) or
    ``aggregate_size`` (split evenly over the threads, as the Dell documents do).
    ``gpfs_pagepool_client`` is the client pagepool the run was made with, when the document set
    it for this benchmark (PixStor's random test: 16 GiB instead of the sequential tests' 32 GiB).
    ``max_file_size`` caps the bytes per thread (the high-capacity runs: 768 GB per thread when
    the aggregate split over few threads would exceed it).
    """

    name: Text
    title: Text
    source: Text
    benchmark: Benchmark
    command: Text | None = None
    ops: list[Op] = Field(min_length=1)
    record_size: Size
    direct_io: bool
    fsync: bool = True
    file_size: Size | None = None
    aggregate_size: Size | None = None
    max_file_size: Size | None = None
    threads: list[Count] = Field(min_length=1)
    placement: Literal["round_robin"] = "round_robin"
    stripe: StripeOverride | None = None
    gpfs_pagepool_client: Size | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        if (self.file_size is None) == (self.aggregate_size is None):
            raise ValueError("give exactly one of file_size (per thread) and aggregate_size")
        random = {"random_write", "random_read"}
        if self.benchmark == "iozone_random_nn" and not set(self.ops) <= random:
            raise ValueError("iozone_random_nn runs random_write / random_read only")
        if self.benchmark != "iozone_random_nn" and set(self.ops) & random:
            raise ValueError(f"{self.benchmark} runs write / read only")
        if len(set(self.ops)) != len(self.ops):
            raise ValueError("an operation is listed twice")
        if sorted(self.threads) != self.threads or len(set(self.threads)) != len(self.threads):
            raise ValueError("threads must be increasing and distinct")
        return self

    def file_size_for(self, threads: int) -> float:
        """Bytes each thread's file (or its block of the shared file) holds at ``threads`` threads."""
        size = self.file_size if self.file_size is not None else (self.aggregate_size or 0.0) / threads
        if self.max_file_size is not None:
            size = min(size, self.max_file_size)
        return size

    def with_threads(self, threads: list[int]) -> Workload:
        """The same workload over another thread sweep (``pfssim run --threads``)."""
        return self.model_copy(update={"threads": sorted(set(threads))})
