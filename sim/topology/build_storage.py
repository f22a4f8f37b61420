"""Build steps for storage: enclosures, controllers, drive pools, and dealing drives into RAID groups."""

from __future__ import annotations

from typing import Any

from sim.config.parts import Drive, Enclosure
from sim.config.system import (
    DriveSet,
    RaidSpec,
)
from sim.config.units import Dimension, format_quantity
from sim.topology.build_base import BuilderBase, YamlPath, _Abort, _Pool
from sim.topology.model import Component, RaidGroup

#: The most members a linear disk group of a PowerVault ME4 array may have, by RAID level (ME4 Series
#: Administrator's Guide, Table 4 "Linear disk group expansion by RAID level": RAID 0, 3, 5 and 6 up
#: to 16 disks, RAID 1 exactly 2, RAID 10 up to 16). Every enclosure pfssim models is an ME4 (the
#: ME4084 and ME4024 controller enclosures, the ME484 expansion).
ME4_MAX_MEMBERS = {0: 16, 1: 2, 5: 16, 6: 16, 10: 16}
#: The largest stripe unit an ME4 controller uses: "The controller will use a 512-KB stripe unit size
#: when the data disks are a power of two" (ME4 Series Administrator's Guide, "Disk count per RAID
#: level"; 64 KB otherwise, for RAID 5 and 6). No larger unit is named anywhere in the guide.
ME4_MAX_STRIPE_UNIT = 512 * 1024
#: The stripe unit of a RAID 5 or 6 group whose data disks are not a power of two (the same passage).
ME4_ODD_PARITY_STRIPE_UNIT = 64 * 1024


class StorageSteps(BuilderBase):
    """Enclosures, expansions, drive pools and RAID groups."""

    def build_enclosures(self) -> None:
        """Controller enclosures, their controllers, drives, virtual disks and expansions."""
        for i, enc in enumerate(self.spec.enclosures):
            path: YamlPath = ("enclosures", i)
            try:
                part = self.part("enclosures", enc.part, enc.overrides, path)
                assert isinstance(part, Enclosure)
                if part.kind != "controller":
                    self.problem((*path, "part"), f"{enc.part!r} is an expansion enclosure; put it under 'expansion'")
                    raise _Abort
                for name in self.names(enc.name, enc.count, enc.start, path):
                    self.build_enclosure(name, enc, part, path)
            except _Abort:
                self.enclosure_failed = True
                continue

    def build_enclosure(self, name: str, enc: Any, part: Enclosure, path: YamlPath) -> None:
        """One controller enclosure (and its expansion, if any)."""
        assert part.controllers and part.host_port_bus and part.host_port_lanes
        self.add_unique(Component(name, "enclosure", part.model), path)
        self.system.part_names[name] = enc.part
        letters = [chr(ord("A") + c) for c in range(part.controllers)]
        ctrl_names = []
        for letter in letters:
            ctrl = f"{name}.ctrl{letter}"
            assert part.array_seq_read and part.array_seq_write
            self.add_unique(
                Component(
                    ctrl,
                    "controller",
                    part.model,
                    part.array_seq_read / part.controllers,
                    part.array_seq_write / part.controllers,
                    note="array rate shared equally by its controllers",
                ),
                path,
            )
            self.system.connect(name, ctrl)
            ctrl_names.append(ctrl)
            self.controller_ports[ctrl] = part.host_ports_per_controller or 0
            self.controller_cables[ctrl] = 0
        self.controllers[name] = ctrl_names
        assert part.array_read_iops and part.array_write_iops
        self.system.enclosure_iops[name] = (part.array_read_iops, part.array_write_iops)
        if part.cache_per_controller:
            self.system.enclosure_cache[name] = part.cache_per_controller
        # Adaptive read-ahead sizes itself by rules Dell does not publish; modelled as the documented
        # "Stripe" setting (docs/design.md, Devices).
        self.system.enclosure_read_ahead[name] = "stripe" if enc.read_ahead == "adaptive" else enc.read_ahead
        cache = part.cache_per_controller
        if isinstance(enc.read_ahead, float) and cache and enc.read_ahead > cache / 2:  # the read-ahead half
            self.problem(
                (*path, "read_ahead"),
                f"a read-ahead of {format_quantity(enc.read_ahead, Dimension.SIZE)} does not fit in the "
                f"{format_quantity(cache / 2, Dimension.SIZE)} of a controller's cache kept for read-ahead "
                f"(half its {format_quantity(cache, Dimension.SIZE)})",
            )
        pool = self.make_pool(name, enc.drives, part.slots, ctrl_names, path)
        owners = self.deal_groups(pool, enc.raid_groups, enc.spares, "vd{i}", path, ctrl_names, 0)
        if enc.expansion is None:
            return
        epath: YamlPath = (*path, "expansion")
        exp_part = self.part("enclosures", enc.expansion.part, enc.expansion.overrides, epath)
        assert isinstance(exp_part, Enclosure)
        if exp_part.kind != "expansion":
            self.problem((*epath, "part"), f"{enc.expansion.part!r} is not an expansion enclosure")
            raise _Abort
        exp_name = f"{name}.{enc.expansion.name}"
        self.add_unique(Component(exp_name, "enclosure", exp_part.model), epath)
        self.system.part_names[exp_name] = enc.expansion.part
        port_rate = part.host_port_lanes * self.lane_rate(part.host_port_bus, None)
        exp_ports = []
        for ctrl in ctrl_names:
            port = f"{ctrl}.expansion"
            self.add_unique(
                Component(
                    port,
                    "sas_port",
                    part.model,
                    port_rate,
                    port_rate,
                    note=f"SAS x{part.host_port_lanes} expansion port",
                ),
                epath,
            )
            self.system.connect(ctrl, port)
            self.system.connect(port, exp_name)
            exp_ports.append(port)
        exp_pool = self.make_pool(exp_name, enc.expansion.drives, exp_part.slots, exp_ports, epath)
        self.deal_groups(exp_pool, enc.expansion.raid_groups, enc.expansion.spares, "vd{i}", epath, exp_ports, owners)

    def me4_group_ok(self, raid: RaidSpec, gpath: YamlPath) -> bool:
        """An enclosure's RAID group within what an ME4 array can build (else a problem, and False)."""
        most = ME4_MAX_MEMBERS[raid.level]
        ok = True
        if raid.members > most:
            self.problem(
                (*gpath, "members"),
                f"an ME4 linear disk group of RAID{raid.level} has at most {most} members (ME4 Series "
                f"Administrator's Guide, linear disk group limits by RAID level); got {raid.members}",
            )
            ok = False
        if raid.stripe_unit > ME4_MAX_STRIPE_UNIT:
            self.problem(
                (*gpath, "stripe_unit"),
                f"an ME4 controller stripes with units of at most 512 KiB (ME4 Series Administrator's Guide: "
                f"512 KB when the data disks are a power of two, 64 KB otherwise); got "
                f"{format_quantity(raid.stripe_unit, Dimension.SIZE)}",
            )
            ok = False
        data = raid.members - (raid.level - 4 if raid.level in (5, 6) else 0)
        if ok and raid.level in (5, 6) and data & (data - 1) and raid.stripe_unit > ME4_ODD_PARITY_STRIPE_UNIT:
            # The controller chooses the unit: 512 KB only when the data disks divide it evenly.
            self.problem(
                (*gpath, "stripe_unit"),
                f"an ME4 controller stripes a RAID{raid.level} group of {data} data disks (not a power of two) "
                f"with 64 KiB units (ME4 Series Administrator's Guide: 512 KB when the data disks are a power "
                f"of two, 64 KB otherwise); got {format_quantity(raid.stripe_unit, Dimension.SIZE)}",
            )
            ok = False
        return ok

    def make_pool(self, name: str, drives: DriveSet, slots: int | None, upstream: list[str], path: YamlPath) -> _Pool:
        """``drives.count`` drives named ``<name>.drive<n>`` attached to ``upstream``."""
        if slots is not None and drives.count > slots:
            self.problem((*path, "drives", "count"), f"{drives.count} drives do not fit in {slots} slots")
            raise _Abort
        part = self.part("drives", drives.part, drives.overrides, (*path, "drives"))
        assert isinstance(part, Drive)
        self.check_drive_bus(part, "sas", "an ME4 enclosure's drive slots are SAS (12 Gb/s SAS midplane)", path)
        pool = _Pool(name, upstream=list(upstream))
        self.pools[name] = pool
        self.add_drives(pool, drives.part, part, drives.count, upstream, path)
        return pool

    def add_drives(
        self,
        pool: _Pool,
        part_name: str,
        part: Drive,
        count: int,
        upstream: list[str],
        path: YamlPath,
        host_bus: str | None = None,
    ) -> None:
        """Append ``count`` drives to ``pool``; each connects to every upstream part. ``host_bus`` is
        what the drives plug into (a CPU's or a PCIe switch's generation; None for SAS slots): a
        PCIe 4 drive on PCIe 3 lanes links at PCIe 3 and moves no more than that."""
        iface = part.interface.lanes * self.lane_rate(part.interface.bus, None)
        # A drive moves no more than its own link carries: a figure above that is a typo. A slower
        # host slot caps it further, which is the host's doing, not an impossible part.
        over = [
            (f, rate)
            for f, rate in (("seq_read", part.seq_read), ("seq_write", part.seq_write))
            if rate > iface * (1 + 1e-9)
        ]
        if over:
            field, rate = over[0]
            self.problem(
                path if path[-1:] == ("drives",) else (*path, "drives"),  # the drives' part and overrides
                f"{part.model}: {field} {format_quantity(rate, Dimension.BANDWIDTH)} is above what its own "
                f"{part.interface.bus} x{part.interface.lanes} interface carries "
                f"({format_quantity(iface, Dimension.BANDWIDTH)}); no drive moves more data than its link",
            )
            raise _Abort
        link = part.interface.lanes * self.lane_rate(part.interface.bus, host_bus)
        note = (
            f"{part.interface.bus} x{part.interface.lanes} drive on {host_bus} lanes"
            if link < iface * (1 - 1e-9) and host_bus is not None
            else ""
        )
        for _ in range(count):
            drive = f"{pool.name}.drive{len(pool.drives)}"
            self.add_unique(
                Component(drive, "drive", part.model, min(part.seq_read, link), min(part.seq_write, link), note=note),
                path,
            )
            self.system.part_names[drive] = part_name
            self.system.drive_parts[drive] = part
            for up in upstream:
                self.system.connect(up, drive)
            pool.drives.append(drive)
            pool.parts.append((part_name, part))

    def deal_groups(
        self,
        pool: _Pool,
        specs: list[RaidSpec],
        spares: int,
        default_name: str,
        path: YamlPath,
        owners: list[str],
        owner_start: int,
    ) -> int:
        """Deal the pool's drives into RAID groups; returns the next controller-ownership index."""
        next_slot = 0
        owner_index = owner_start
        counters = {"data": 0, "metadata": 0, "vd": 0}
        problems_before = len(self.problems)
        for g, raid in enumerate(specs):
            gpath: YamlPath = (*path, "raid_groups", g)
            if raid.drives is not None:
                slot_lists = [list(raid.drives)]
            else:
                slot_lists = []
                block = raid.members * raid.interleave
                for k in range(raid.count):
                    base = next_slot + (k // raid.interleave) * block
                    offset = k % raid.interleave
                    slot_lists.append([base + offset + m * raid.interleave for m in range(raid.members)])
                whole_blocks = -(-raid.count // raid.interleave)
                next_slot += whole_blocks * block
            # After the slots are dealt, so that the groups after a refused one take their own.
            if owners and not self.me4_group_ok(raid, gpath):
                continue
            pattern = raid.name or default_name
            if raid.owner != "alternate" and not owners:
                self.problem(
                    (*gpath, "owner"),
                    f"owner {raid.owner!r} names the enclosure controller that owns a virtual disk; {pool.name} "
                    "has no controllers (its drives are the server's own)",
                )
                continue
            if "{i}" not in pattern and len(slot_lists) > 1:
                self.problem((*gpath, "name"), f"name {pattern!r} needs an '{{i}}' placeholder when count > 1")
                continue
            for slots in slot_lists:
                bad = [s for s in slots if s >= len(pool.drives)]
                if bad:
                    # Without the zone's or enclosure's name: a template's mistake then reads the
                    # same for every server built from it and is printed once.
                    have = len(pool.drives)
                    if raid.drives is not None:
                        message = (
                            f"drive slot {bad[0]} does not exist: {have} drives are declared here "
                            f"(slots 0 to {have - 1})"
                        )
                    else:
                        needed = max(max(other) for other in slot_lists) + 1
                        # A zone's drives are its own drives: and its PCIe switches' together.
                        holder = (
                            "the expansion's drives: declares"
                            if "expansion" in gpath
                            else "the enclosure's drives: declares"
                            if "enclosures" in gpath
                            else "the zone's drives (its own drives: and its PCIe switches') number"
                        )
                        dealt = ""
                        if raid.interleave > 1:
                            # The slots an interleave leaves between its groups count too.
                            blocks = -(-raid.count // raid.interleave)
                            dealt = (
                                f"; interleave {raid.interleave} deals blocks of {raid.interleave} x {raid.members} "
                                f"slots, so {raid.count} groups span {blocks} block{'s' if blocks > 1 else ''} "
                                f"and slots up to {needed - 1}"
                            )
                        message = (
                            f"the RAID groups take {needed} drives up to this entry ({raid.count} x "
                            f"{raid.members} members here, dealt after those listed before it{dealt}), but "
                            f"{holder} {have}"
                        )
                    self.problem(gpath, message)
                    break
                taken = [s for s in slots if s in pool.used]
                if taken:
                    self.problem(gpath, f"drive {pool.drives[taken[0]]} is already in RAID group {pool.used[taken[0]]}")
                    break
                kinds = {pool.parts[s][0] for s in slots}
                if len(kinds) > 1:
                    self.problem(gpath, f"mixes drive models {sorted(kinds)} in one RAID group")
                    break
                key = "vd" if pattern == "vd{i}" else raid.role
                index = counters[key]
                counters[key] += 1
                if pattern == default_name and default_name != "vd{i}":
                    pattern_here = "target{i}" if raid.role == "data" else "mdt{i}"
                else:
                    pattern_here = pattern
                group_name = f"{pool.name}.{pattern_here.replace('{i}', str(index))}"
                owner = None
                upstream = tuple(dict.fromkeys(u for s in slots for u in self.upstream_of(pool, s)))
                if owners:
                    if raid.owner == "alternate":
                        owner = owners[owner_index % len(owners)]
                        owner_index += 1
                    else:
                        letter_index = ord(raid.owner) - ord("A")
                        owner = owners[min(letter_index, len(owners) - 1)]
                    upstream = (owner,)
                part_name, part = pool.parts[slots[0]]
                if part.capacity < raid.stripe_unit:
                    self.problem(
                        (*gpath, "stripe_unit"),
                        f"the stripe unit ({format_quantity(raid.stripe_unit, Dimension.SIZE)}) is larger than a "
                        f"whole member drive ({format_quantity(part.capacity, Dimension.SIZE)})",
                    )
                    break
                members = tuple(pool.drives[s] for s in slots)
                group = RaidGroup(
                    name=group_name,
                    level=raid.level,
                    members=members,
                    drive=part,
                    drive_part=part_name,
                    stripe_unit_B=raid.stripe_unit,
                    role=raid.role,
                    pool=pool.name,
                    upstream=upstream,
                    owner=owner,
                    filesystem=raid.filesystem,
                )
                member_read = min(self.system.components[m].read_Bps or 0.0 for m in members)
                member_write = min(self.system.components[m].write_Bps or 0.0 for m in members)
                try:
                    self.add_unique(
                        Component(
                            group_name,
                            "raid_group",
                            f"RAID{raid.level} of {len(members)}x {part.model}",
                            group.streaming_Bps("read", member_read, member_write),
                            group.streaming_Bps("write", member_read, member_write),
                        ),
                        gpath,
                    )
                except _Abort:
                    break
                self.system.add_group(group)
                self.group_paths[group_name] = gpath
                for s, member in zip(slots, members, strict=True):
                    pool.used[s] = group_name
                    self.system.connect(member, group_name)
                if owner is not None:
                    self.system.connect(owner, group_name)
        unassigned = [i for i in range(len(pool.drives)) if i not in pool.used]
        # A RAID group reported above leaves its drives unassigned: the count would only echo it.
        if len(unassigned) != spares and len(self.problems) == problems_before:
            where = path if not specs else (*path, "raid_groups")
            self.problem(
                where,
                f"{self.named(where, pool.name, 'this zone')} has {len(unassigned)} drives in no RAID group but "
                f"{spares} spares (`spares:`, "
                f"0 when not given); declare spares: {len(unassigned)} or put the drives in RAID groups",
            )
        roles = {self.system.groups[g].role for g in pool.used.values()}
        data_tier = "data" in roles
        for i, drive in enumerate(pool.drives):
            in_data_group = i in pool.used and self.system.groups[pool.used[i]].role == "data"
            if in_data_group or (i not in pool.used and data_tier):
                self.system.data_tier_drives.append(drive)
        return owner_index

    def upstream_of(self, pool: _Pool, slot: int) -> list[str]:
        """The parts a drive hangs off (its PCIe switch or the zone's root complex)."""
        drive = pool.drives[slot]
        return [n for n in self.system.graph.neighbors(drive) if self.system.components[n].kind != "raid_group"]
