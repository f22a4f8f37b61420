"""The model's own parameters: every number the simulator uses that is not in a topology or a part.

Each parameter has a value in SI units, a source, and, when it was fitted, the dataset it was
fitted on. They are fitted once and then frozen; a prediction for any system uses the same values.
``pfssim reproduce --parameters`` (validation issue) lists this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Parameter:
    """One named model parameter."""

    name: str
    value: float
    unit: str
    meaning: str
    source: str
    fitted_on: str | None = None


_PARAMETERS = [
    Parameter(
        "beegfs_storage_request_cpu_s",
        73e-6,
        "s",
        "CPU time a BeeGFS storage server spends per request (receive, worker dispatch, syscall, reply), "
        "on one core of the service's NUMA zone",
        "fitted once, in closed form: the random 4 KiB write peak of beegfs-edr-2019 (3.6M IOPS at 512 "
        "threads) is CPU-bound, so 11 storage zones x 24 cores / 3.6M IOPS = 73 us",
        "beegfs-edr-2019 iozone random write",
    ),
    Parameter(
        "beegfs_client_request_cpu_s",
        10e-6,
        "s",
        "client CPU time per BeeGFS request (syscall, message build, RDMA post)",
        "[ASSUMED] order of a kernel syscall plus an RDMA post; not fitted",
    ),
    Parameter(
        "network_latency_s",
        2e-6,
        "s",
        "one-way InfiniBand latency per message (HCA + switch), added to each transfer",
        "[ASSUMED] typical EDR/HDR switch + HCA latency (~1 us each hop)",
    ),
    Parameter(
        "hdd_track_to_track_seek_s",
        0.5e-3,
        "s",
        "shortest seek of a 3.5in 7.2K HDD; the seek curve is t0 + b sqrt(distance) with b set so the "
        "mean over uniform random distances equals the datasheet average seek",
        "[ASSUMED] typical enterprise 3.5in value; datasheets give average seek only",
    ),
    Parameter(
        "hdd_ncq_depth",
        32,
        "commands",
        "commands an NL-SAS drive reorders (shortest access time first)",
        "SAS/SATA NCQ limit of 32 tagged commands per SATA drive; SAS drives queue more, the ME4 "
        "issues at most this many per drive [ASSUMED]",
    ),
    Parameter(
        "me4_cache_entries_per_vdisk",
        512,
        "writes",
        "dirty writes (or gathered stripes) the simulated ME4 write cache holds per virtual disk, over "
        "which its destages sweep in address order: the effective sort window of the controller's "
        "flushes, which sets how short the drives' seeks are under random small writes",
        "fitted on pixstor-large iozone random write (flat near 12.8K IOPS from 1 to 256 threads): the "
        "window with the smallest worst error over the two points (bench/fit_me4_sort_window.py 384 512 "
        "768). First fitted at 768, then again by the same rule after each change to the measurement or "
        "to the HDD and ME4 models that moved those points (cutting initial transients, doubling batches, "
        "hashed sector angles, GPFS LUNs on their own primary NSD server, caches started as the destage elevator "
        "leaves them, warming up until such a start is turned over, destages in flight starting behind "
        "the sweep): 512 every time since. At the last fit 512 gave -4.3% / +2.4% at 1 / 256 "
        "threads (384: -10.2% / -5.4%; 768: +7.2% / +13.7%), and the high-capacity check points +3.3% / "
        "+3.4% at 32 / 512 threads; plausible against the [ASSUMED] 8 GiB cache per controller (512 x "
        "512 KiB chunk-sized cache segments x 4 virtual disks = 1 GiB of dirty data per controller)",
        "pixstor-large iozone random write",
    ),
    Parameter(
        "gpfs_nsd_block_cpu_s",
        100e-6,
        "s",
        "CPU time an NSD server spends per block request",
        "[ASSUMED] same order as the BeeGFS per-request time; not fitted",
    ),
    Parameter(
        "gpfs_nsd_threads",
        1024,
        "threads",
        "NSD server worker threads (nsdMaxWorkerThreads), where the topology does not set filesystem.nsd_threads",
        "public Spectrum Scale configuration with nsdMaxWorkerThreads 1024 (research/modeling-facts.md 2.3)",
    ),
    Parameter(
        "gpfs_nsd_threads_per_queue",
        16,
        "threads",
        "NSD worker threads serving one LUN's large requests (nsdThreadsPerQueue; each data or "
        "metadata LUN is taken to have a queue of its own [ASSUMED]: GPFS hashes LUNs onto "
        "nsdMultiQueue queues, 1024 / 16 = 64 a server here), where the topology does not set "
        "filesystem.nsd_threads",
        "the same public Spectrum Scale configuration as gpfs_nsd_threads: nsdThreadsPerQueue 16 "
        "(research/modeling-facts.md 2.3); not fitted",
    ),
    Parameter(
        "gpfs_nsd_small_io_bytes",
        65536,
        "bytes",
        "requests up to this size go to the NSD servers' small-I/O queues (nsdSmallThreadRatio), "
        "which are not limited per LUN",
        "[ASSUMED] 64 KiB; the boundary between small and large NSD queues is not found in the "
        "sources here. No shipped request lies between 16 KiB and 8 MiB, so any value in between "
        "gives the same results",
    ),
    Parameter(
        "gpfs_prefetch_threads",
        72,
        "threads",
        "threads a GPFS client node has for prefetch and write-behind block I/Os, taken in turn by its streams",
        "Spectrum Scale default prefetchThreads = 72 [ASSUMED: default from IBM documentation, not retrieved]",
    ),
]

_PARAMETERS += [
    Parameter(
        "beegfs_meta_request_cpu_s",
        73e-6,
        "s",
        "CPU time a BeeGFS metadata service spends per request (receive, worker dispatch, ext4 dentry "
        "and inode work, reply), on one core of the service's NUMA zone",
        "[ASSUMED] equal to the fitted beegfs_storage_request_cpu_s: the same message framework and "
        "worker design, one local file-system operation per request; no BeeGFS metadata measurement is "
        "published to fit it on",
    ),
    Parameter(
        "beegfs_mdt_update_bytes",
        4096,
        "B",
        "bytes a BeeGFS create or unlink writes to its metadata target (ext4)",
        "one ext4 block (mkfs.ext4 default block size 4 KiB): the dentry file with its inlined inode "
        "(research notes 1.4) updated in one block",
    ),
    Parameter(
        "beegfs_mdt_bytes_per_file",
        500e9 / 150e6,
        "B",
        "metadata-target capacity one BeeGFS file takes (its dentry and inlined inode on ext4); a "
        "directory takes four times as much (two directories and two metadata files)",
        "BeeGFS System Requirements, Disk Space Requirements (https://doc.beegfs.io/latest/system_design/"
        "system_requirements.html): '500GB of metadata capacity are sufficient for about 150 million files' "
        "with ext4 formatted as the Metadata Node Tuning guide recommends; 'for every directory that a user "
        "creates, two directories and two metadata files are created'",
    ),
    Parameter(
        "gpfs_node_meta_call_s",
        3.85e-6,
        "s",
        "time a GPFS client node's daemon is busy per metadata system call served from its cache "
        "(stat, open, close, creat, unlink): one call at a time per node",
        "fitted once, in closed form, on the pixstor-large empty-file mdtest (stat and read are "
        "node-cache operations, 1 and 2 calls): 16 nodes / geometric mean of (stat peak 5.34M, stat "
        "sustained 2.9M, 2 x read peak 2.42M, 2 x read sustained 2.0M op/s) = 16 / 4.16M = 3.85 us",
        "pixstor-large mdtest empty files (stat, read)",
    ),
]

_PARAMETERS.append(
    Parameter(
        "client_memcpy_Bps",
        10e9,
        "B/s",
        "rate at which a client thread copies a record into or out of the GPFS pagepool",
        "[ASSUMED] one core's memcpy bandwidth on a 2019 Xeon (order of 10 GB/s)",
    )
)

PARAMETERS: dict[str, Parameter] = {p.name: p for p in _PARAMETERS}


def value(name: str) -> float:
    """The frozen value of a named parameter."""
    return PARAMETERS[name].value
