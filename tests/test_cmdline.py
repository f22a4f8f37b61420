"""Real IOzone and IOR command lines become workloads; anything pfssim cannot model is a located error."""

from __future__ import annotations

import pytest

from sim.benchmarks.cmdline import (
    IOR_NO_EFFECT,
    IOR_NO_EFFECT_WITH_VALUE,
    IOZONE_NO_EFFECT,
    IOZONE_NO_EFFECT_WITH_VALUE,
    LAUNCHER_NO_EFFECT,
    LAUNCHER_NO_EFFECT_WITH_VALUE,
    command_mismatches,
    parse_command,
)
from sim.errors import WorkloadError

KiB, MiB, GiB = 2**10, 2**20, 2**30

# The BeeGFS HP 2019 sequential command with $Size and $Thread filled in.
HP_SEQ = "iozone -i 0 -i 1 -c -e -w -r 1m -I -s 8g -t 64 -+n -+m threadlist"
HP_RANDOM = "iozone -i 2 -w -c -O -I -r 4K -s 8g -t 1024 -+n -+m /path/to/threadlist"
PIXSTOR_SEQ_WRITE = "./iozone -i0 -c -e -w -r 16M -s 512G -t 16 -+n -+m ./threadlist"
PIXSTOR_IOR_READ = (
    "mpirun --allow-run-as-root -np 16 --hostfile my_hosts.16 --mca btl_openib_allow_ib 1 --mca pml ^ucx "
    "--oversubscribe --prefix /usr/mpi/gcc/openmpi-4.1.2a1 /usr/local/bin/ior -a POSIX -v -i 1 -d 3 -e -k "
    "-o /mmfs1/perftest/ior/tst.file -r -s 1 -t 16m -b 512G"
)
# The high-capacity IOR line as printed, en dash included, with its variables filled in.
HC_IOR = (
    "mpirun \u2013-allow-run-as-root -machinefile hosts --map-by node -np 4 ~/bin/ior -w -r -i 3 -t 8m "
    "-b 768g -g -d 3 -e -E -k -o /work/ior.out -s 1"
)


def _problem(command: str):
    with pytest.raises(WorkloadError) as info:
        parse_command(command)
    problems = info.value.problems
    assert problems and all(p.file == "--cmd" and p.line is None for p in problems)
    return problems


def test_beegfs_sequential_iozone() -> None:
    w = parse_command(HP_SEQ, name="hp")
    assert w.benchmark == "iozone_seq_nn"
    assert w.ops == ["write", "read"]
    assert w.record_size == 1 * MiB
    assert w.file_size == 8 * GiB and w.aggregate_size is None
    assert w.threads == [64]
    assert w.direct_io is True and w.fsync is True
    assert (w.name, w.source, w.command, w.placement) == ("hp", "--cmd", HP_SEQ, "round_robin")
    assert w.title == "IOzone sequential N-N from --cmd"


def test_beegfs_random_iozone() -> None:
    w = parse_command(HP_RANDOM)
    assert w.benchmark == "iozone_random_nn"
    assert w.ops == ["random_read", "random_write"]
    assert w.record_size == 4 * KiB
    assert w.threads == [1024]
    assert w.direct_io is True
    assert w.fsync is False  # no -e
    assert w.title == "IOzone random N-N from --cmd"


def test_pixstor_glued_test_number_and_no_direct() -> None:
    w = parse_command(PIXSTOR_SEQ_WRITE)
    assert w.ops == ["write"]
    assert w.record_size == 16 * MiB and w.file_size == 512 * GiB
    assert w.direct_io is False and w.fsync is True
    assert parse_command(PIXSTOR_SEQ_WRITE.replace("-i0", "-i1")).ops == ["read"]
    assert parse_command("iozone -i1 -i0 -r 1m -s 1g -t 2").ops == ["write", "read"]  # IOzone's order


def test_iozone_plain_numbers_are_kib_and_suffixes_are_binary() -> None:
    w = parse_command("iozone -i 0 -r 1024 -s 1048576 -t 2")
    assert w.record_size == MiB and w.file_size == GiB
    w = parse_command("iozone -i 0 -r 4K -s 2G -t 2")
    assert w.record_size == 4 * KiB and w.file_size == 2 * GiB
    w = parse_command("iozone -i 0 -r64k -s3m -t8")  # getopt lets values be glued on
    assert (w.record_size, w.file_size, w.threads) == (64 * KiB, 3 * MiB, [8])


def test_an_iozone_file_holds_whole_records() -> None:
    """IOzone divides -s by -r and drops the remainder (numrecs64 in iozone.c): -s 1500k -r 1m
    writes one 1 MiB record, so pfssim's file is 1 MiB (the fuzz review of session 31 found the
    1,536,000-byte file simulated with a fraction of a record)."""
    w = parse_command("iozone -i 0 -r 1m -s 1500k -t 2")
    assert w.file_size == 1500 * KiB and w.file_size_for(2) == MiB
    assert parse_command("iozone -i 0 -r 1m -s 3m -t 2").file_size_for(2) == 3 * MiB
    assert parse_command("iozone -i 2 -r 4k -s 4097k -t 2").file_size_for(2) == 4096 * KiB


def test_iozone_file_names_follow_the_thread_count() -> None:
    w = parse_command("iozone -i 0 -t 2 -r 1m -s 64m -I -e -c -w -F /scratch/f1 /scratch/f2")
    assert w.threads == [2] and w.file_size == 64 * MiB


def test_ior_shared_file() -> None:
    command = "mpirun -np 64 ior -a POSIX -w -r -e -s 1 -t 16m -b 128g -o /mnt/fs/file"
    w = parse_command(command)
    assert w.benchmark == "ior_seq_n1"
    assert w.ops == ["write", "read"]
    assert w.record_size == 16 * MiB and w.file_size == 128 * GiB
    assert w.threads == [64]
    assert w.direct_io is False and w.fsync is True
    assert w.command == command and w.title == "IOR sequential N-1 (shared file) from --cmd"


def test_ior_and_mdtest_sizes_take_t_and_p_as_iors_parser_does_and_iozone_only_k_m_g() -> None:
    # An architect's `-b 1t` was refused; IOR's string_to_bytes (which mdtest shares) reads k, m,
    # g, t and p, IOzone's -s and -r only k, m and g.
    assert parse_command("mpirun -np 2 ior -w -t 16m -b 1t").file_size == 2**40
    assert parse_command("mpirun -np 2 ior -w -t 1m -b 1P").file_size == 2**50
    assert parse_command("mpirun -np 2 mdtest -F -C -n 1k -w 1m -d /mnt/x").items == 1024
    with pytest.raises(WorkloadError, match=r"optional k, m or g suffix, e.g. -s 8g"):
        parse_command("iozone -i 0 -r 1m -s 1t -t 2")
    with pytest.raises(WorkloadError, match=r"optional k, m, g, t or p suffix, e.g. -b 16g"):
        parse_command("mpirun -np 2 ior -w -t 1m -b 1x")


def test_pixstor_ior_with_launcher_flags() -> None:
    w = parse_command(PIXSTOR_IOR_READ)
    assert (w.benchmark, w.ops, w.threads) == ("ior_seq_n1", ["read"], [16])
    assert w.record_size == 16 * MiB and w.file_size == 512 * GiB
    assert w.fsync is True and w.direct_io is False
    assert parse_command(PIXSTOR_IOR_READ.replace(" -r ", " -w ")).ops == ["write"]


def test_high_capacity_ior_with_en_dash() -> None:
    w = parse_command(HC_IOR)
    assert (w.benchmark, w.ops, w.threads) == ("ior_seq_n1", ["write", "read"], [4])
    assert w.record_size == 8 * MiB and w.file_size == 768 * GiB
    assert w.fsync is True and w.direct_io is False


def test_ior_file_per_process_segments_and_defaults() -> None:
    w = parse_command("mpiexec -n 8 ior -F -t 1048576 -b 1g -s 4")
    assert w.benchmark == "ior_seq_nn"
    assert w.record_size == MiB  # IOR sizes without a suffix are bytes
    assert w.file_size == 4 * GiB  # -b x -s per task
    assert w.ops == ["write", "read"]  # neither -w nor -r: IOR does both
    assert w.fsync is False
    assert w.title == "IOR sequential N-N (file per process) from --cmd"


@pytest.mark.parametrize("flag", ["-B", "--posix.odirect", "-O useO_DIRECT=1"])
def test_ior_direct_io(flag: str) -> None:
    assert parse_command(f"mpirun -np 2 ior -w {flag} -t 1m -b 1g").direct_io is True


@pytest.mark.parametrize("bundle", ["-Ice -w", "-Icew", "-cw -Ie", "-Icewr1m"])
def test_iozone_bundled_switches_read_as_getopt_does(bundle: str) -> None:
    """IOzone parses with getopt: switches may share one dash, the last one may take the rest as its value."""
    spaced = parse_command("iozone -i 0 -i 1 -I -c -e -w -r 1m -s 1g -t 4")
    extra = "" if bundle.endswith("1m") else " -r 1m"
    bundled = parse_command(f"iozone -i0 -i1 {bundle}{extra} -s1g -t4")
    assert bundled.model_dump(exclude={"command"}) == spaced.model_dump(exclude={"command"})


def test_the_task_count_given_twice_alike_is_one_count() -> None:
    # -np, -n and --np are one setting, compared as numbers: mpirun reads 08 as 8. They were compared
    # as text, so that an agreeing repeat was refused.
    assert parse_command("mpirun -np 8 -n 08 ior -w -t 1m -b 1g").threads == [8]


@pytest.mark.parametrize("form", ["-t16m -b2g -s1 -aPOSIX", "-t=16m -b=2g -s=1 -a=POSIX -O=useO_DIRECT=1"])
def test_ior_values_glued_or_after_equals(form: str) -> None:
    """IOR's option parser (option.c) takes a short option's value glued on or after '='."""
    spaced = parse_command("mpirun -np 4 ior -w -t 16m -b 2g -s 1 -a POSIX -o /mnt/f")
    glued = parse_command(f"mpirun -np 4 ior -w {form} -i3 -d=5 -o/mnt/f")
    assert glued.record_size == spaced.record_size == 16 * MiB
    assert glued.file_size == spaced.file_size == 2 * GiB
    assert glued.direct_io is ("useO_DIRECT" in form)


@pytest.mark.parametrize(
    ("command", "key", "value"),
    [
        ("iozone -i 0 -r 1024k -s 1g -t 2 -r 1m", "record_size", 2**20),
        ("iozone -i 0 -r 1m -s 1048576 -t 2 -s 1g", "file_size", 2**30),  # a bare -s counts KiB
        ("mpirun -np 2 ior -w -t 1m -b 1g -t 1048576", "record_size", 2**20),  # a bare -t counts bytes
        ("mpirun -np 2 mdtest -F -C -I 1024 -I 1k -z 1 -b 2 -d /x", "items_per_dir", 1024),
        ("mpirun -np 2 mdtest -F -C -I 8 -z 1 -b 2 -w 4k -w 4096 -d /x", "write_bytes", 4096),
    ],
)
def test_a_flag_given_twice_with_one_value_in_two_spellings_is_that_value(command: str, key: str, value: int) -> None:
    assert getattr(parse_command(command), key) == value


def test_ior_verbosity_repeats() -> None:
    assert parse_command("mpirun --np 2 ior -vv -v -w -t 1m -b 1g -O summaryFormat=JSON").threads == [2]


@pytest.mark.parametrize(
    ("command", "path", "fragment"),
    [
        ("iozone -i 0 -r 1m -s 1g -t 2 -x", "-x", "stonewall"),
        ("iozone -i 0 -i 2 -r 4k -s 1g -t 2", "-i", "two benchmarks"),
        ("iozone -i 0 -r 4k -s 1g", "-t", "missing -t"),
        ("iozone -r 4k -s 1g -t 2", "-i", "no test selected"),
        ("iozone -i 3 -r 4k -s 1g -t 2", "-i", "not modelled"),
        ("iozone -i 0 -a -r 4k -s 1g -t 2", "-a", "unsupported flag -a"),
        ("iozone -i 0 -r 4k -s 1.5g -t 2", "-s", "cannot read '1.5g'"),
        ("iozone -i 0 -r 4k -s 1g -t 0", "-t", "at least 1"),
        ("iozone -i 0 -r 4k -s 1g -t 2 -t 4", "-t", "given twice"),
        ("iozone -i 0 -r 2m -s 1m -t 2", "-r", "larger than the file size"),
        ("iozone -i 0 -r 32m -s 1g -t 2", "-r", "Maximum record length is 16777216 bytes"),
        ("iozone -i 0 -F a b -r 4k -s 1g -t 2", "-F", "put -t before -F"),
        ("iozone -i 0 -r 4k -s 1g -t 2 -+m", "-+m", "needs a host-list file"),
        ("mpirun -np 2 ior -w -Y -t 1m -b 1g", "-Y", "fsync after every write"),
        ("mpirun -np 2 ior -w -zF -t 1m -b 1g", "-zF", "reads -zF as -z alone"),
        ("mpirun -np 2 ior -a MPIIO -w -t 1m -b 1g", "-a", "MPIIO"),
        ("mpirun -np 2 ior -w -D 30 -t 1m -b 1g", "-D", "stonewall deadline"),
        ("mpirun -np 2 ior -w -t 3m -b 4m", "-b", "multiple of the transfer size"),
        # A transfer larger than the block: 4 MiB divides by 2 MiB, but the block must be the multiple.
        (
            "mpirun -np 2 ior -w -t 4m -b 2m",
            "-b",
            "the block size (2097152 B) must be a multiple of the transfer size -t (4194304 B), as IOR requires",
        ),
        ("mpirun -np 2 ior -wr -t 1m -b 1g", "-wr", "reads -wr as -w alone and ignores 'r'"),
        ("iozone -i 0 -cx -r 1m -s 1g -t 2", "-x", "turns off stonewalling"),
        ("iozone -i 0 -r 1m -s 1g -t 70000", "-t", "more than the 65,536 threads"),
        ("mpirun -np 70000 ior -w -t 1m -b 1g", "-np", "more than the 65,536 threads"),
        ("iozone -i 0 -Ir -s 1g -t 2", "-r", "needs a record size"),
        ("mpirun -np 2 ior -w -t1m -t 2m -b 1g", "-t", "given twice (1m and 2m)"),
        ("mpirun -np 2 -n 4 ior -w -t 1m -b 1g", "-n", "MPI tasks is given twice (-np 2 and -n 4)"),
        ("mpirun -np 2 ior -w -t 1m -b 1g -OuseO_DIRECT=1", "-O", "write -O useO_DIRECT=1"),
        ("mpirun -np 2 ior -w -t 12 -b 24", "-t", "'transfer size must be a multiple of access size'"),
        ("mpirun -np 2 ior -w -t 8 -b 12", "-b", "'block size must be a multiple of access size'"),
        ("iozone -i 0 -r 4k -s 1g -t \u0664", "-t", "at least 1"),  # an Arabic-Indic 4: atoi reads no digit
        ("iozone -i 0 -r \uff14k -s 1g -t 2", "-r", "cannot read"),  # a full-width 4
        ("mpirun -np 2 ior -w -b 4m", "-t", "missing -t"),
        ("mpirun -np 2 ior -w -t 1m -b 1g -O useO_DIRECT=yes", "-O", "unsupported IOR option"),
        ("mpirun -np 2 ior -w -B -O useO_DIRECT=0 -t 1m -b 1g", "-O", "-B asks for O_DIRECT and -O useO_DIRECT=0"),
        ("mpirun -np 2 ior -w -O useO_DIRECT=0 -t 1m --posix.odirect", "--posix.odirect", "turns it off; give one"),
        ("ior -w -t 1m -b 1g", "-np", "MPI launcher"),
        ("mpirun --map-by node ior -w -t 1m -b 1g", "-np", "no -np"),
        ("mpirun -np 2 --bind-to core ior -w -t 1m -b 1g", "--bind-to", "unsupported mpirun flag"),
        ("mpirun -np 2 --map-by slot ior -w -t 1m -b 1g", "--map-by", "round robin"),
        ("mpirun -np 2 \u2013map-by node ior -w -t 1m -b 1g", "\u2013map-by", "unsupported mpirun flag"),
        ("mpirun -np 2 mdtest -F", "-I", "missing -I or -n"),
        ("fio --rw=read", "fio", "not 'fio'"),
        ("iozone -i 0 -r 1m -s 1g -t 2 'unclosed", "", "quotes"),
        ("", "", "empty"),
        ("iozone -i 0 -i 0 -r 4k -s 1g -t 2", "-i", "given twice"),
        # Flags without effect on the model that name a second file or folder (a fuzz review):
        ("iozone -i 0 -r 4k -s 1g -t 2 -F /a /b -F /c /d", "-F", "-F is given twice"),
        ("iozone -i 0 -r 4k -s 1g -t 2 -I;", "-I;", "unsupported flag -I;"),  # not a bundle of -I and -;
        # Refused with their reason (a tuning review found them only "unsupported"):
        ("mpirun -np 2 ior -w -t 1m -b 16m -D 30", "-D", "stonewall deadline"),
        ("mpirun -np 2 ior -w -t 1m -b 16m -D30", "-D", "stonewall deadline"),
        ("mpirun -np 2 ior -w -t 1m -b 16m -X", "-X", "needs a whole number (a seed) after it"),
        ("mpirun -np 2 ior -w -t 1m -b 16m -X 1.5", "-X", "got '1.5'"),
        ("mpirun -np 2 ior -w -t 1m -b 16m -F -u", "-u", "a directory per task"),
        ("iozone -i 0 -r 4k -s 1g -t 2 -b a.xls -b b.xls", "-b", "given twice (a.xls and b.xls)"),
        ("mpirun -np 2 mdtest -F -C -n 10 -d /a -d /b", "-d", "given twice (/a and /b)"),
        ("iozone -i 0 -r 4k -s -1g -t 2", "-s", "is negative"),
        ("iozone -i 0 -r 1m -s 99999999g -t 2", "-s", "more than 2^53 B"),  # the option, not the key file_size
        ("mpirun -np 4 ior -w -t 8m -b 1g -s 99999999999", "-b/-s", "more than 2^53 B"),  # -b x -s bytes a task
        ("mpirun -np -8 ior -w -t 1m -b 1g", "-np", "is negative"),
        ("mpirun -np 8 mdtest -F -u -I 10 -z 30 -b 10 -d /x", "-z", "more than 2,097,152 directories"),
        ("mpirun -np 64 mdtest -F -u -I 10 -z 5 -b 10 -d /x", "-np", "more than the 2,097,152 pfssim simulates"),
        ("mpirun -np 2 mdtest -F -n 10 -b 1000000000 -z 100000000", "-z", "more than 2,097,152 directories"),
        ("iozone -i 0 -r 1m -s 1000000000000000g -t 1", "-s", "more than 2^53 B"),
        ("mpirun -np 16 --map-by slot ior -w -t 1m -b 1g", "--map-by", "-npernode N"),
        ("mpirun -np 16 --map-by ppr:2:socket ior -w -t 1m -b 1g", "--map-by", "host file"),
        ("mpirun -np 16 -N 4 --map-by node ior -w -t 1m -b 1g", "--map-by", "given twice (-N and --map-by)"),
        ("mpirun -np 16 -npernode 0 ior -w -t 1m -b 1g", "-npernode", "at least 1"),
        ("mpirun -np 16 -ppn four ior -w -t 1m -b 1g", "-ppn", "whole number"),
        ("mpirun -np 2 mdtest -F -C -I 1024 -I 512 -z 1 -b 2 -d /x", "-I", "given twice (1024 and 512)"),
        # A model-level check reported at the option typed, with a command line's (binary) suffixes.
        ("mpirun -np 2 ior -w -t 1000 -b 1000000 -B", "-t", "counts in powers of 1024 (-t 1k is 1,024 bytes)"),
    ],
)
def test_bad_commands_name_the_flag(command: str, path: str, fragment: str) -> None:
    problems = _problem(command)
    assert problems[0].path == path
    assert fragment in problems[0].message, problems[0].message


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("iozone -i 0 -i 1 -c -e -w -r 1m -I -s $Size -t $Thread -+n -+m threadlist", ["-s", "-t"]),
        ("./iozone -i0 -c -e -w -r 16M -s ${FileSize}G -t 8 -+n", ["-s"]),
        ("mpirun -np $threads ior -w -t 8m -b 1g -o $working_dir/ior.out", ["-np", "-o"]),
    ],
)
def test_every_placeholder_is_reported(command: str, paths: list[str]) -> None:
    problems = _problem(command)
    assert [p.path for p in problems] == paths
    assert all("substitute" in p.message for p in problems)


def test_accepted_flags_parse_and_say_why() -> None:
    tables = [IOZONE_NO_EFFECT, IOZONE_NO_EFFECT_WITH_VALUE, IOR_NO_EFFECT, IOR_NO_EFFECT_WITH_VALUE]
    tables += [LAUNCHER_NO_EFFECT, LAUNCHER_NO_EFFECT_WITH_VALUE]
    assert all(reason.strip() for table in tables for reason in table.values())

    # A flag that changes nothing the model uses parses to exactly the workload without it.
    def same(command: str, base: str) -> None:
        got = parse_command(command).model_dump(exclude={"command"})
        assert got == parse_command(base).model_dump(exclude={"command"}), command

    iozone, ior = "iozone -i 0 -r 1m -s 1g -t 2", "mpirun -np 2 ior -w -t 1m -b 1g"
    for flag in IOZONE_NO_EFFECT:
        same(f"iozone -i 0 -r 1m -s 1g -t 2 {flag}", iozone)
    for flag in IOZONE_NO_EFFECT_WITH_VALUE:
        same(f"iozone -i 0 {flag} x -r 1m -s 1g -t 2", iozone)
    for flag in IOR_NO_EFFECT:
        same(f"mpirun -np 2 ior -w {flag} -t 1m -b 1g", ior)
    for flag in IOR_NO_EFFECT_WITH_VALUE:
        same(f"mpirun -np 2 ior -w {flag} 3 -t 1m -b 1g", ior)
    # -X's seed (negative too: IOR varies it per repetition) and -D 0 (no deadline, IOR's default):
    # a commit review found both refused.
    for extra in ("-X 42", "-X -5", "-X-5", "-D 0", "-D0"):
        same(f"mpirun -np 2 ior -w {extra} -t 1m -b 1g", ior)
    for flag in LAUNCHER_NO_EFFECT:
        same(f"mpirun {flag} -np 2 ior -w -t 1m -b 1g", ior)
    for flag in LAUNCHER_NO_EFFECT_WITH_VALUE:
        same(f"mpirun {flag} v -np 2 ior -w -t 1m -b 1g", ior)


def test_ior_segments_of_a_shared_file() -> None:
    # -s 4 on a shared file puts every task's block i in segment i (the tasks' transfers
    # interleave); the workload keeps the count so the models can lay the file out that way. It
    # used to be read as -s 1 with a 4x block, then refused.
    w = parse_command("mpirun -np 8 ior -w -t 1m -b 2m -s 4")
    assert (w.benchmark, w.segments, w.file_size, w.block_for(8)) == ("ior_seq_n1", 4, 8 * MiB, 2 * MiB)
    assert w.title == "IOR sequential N-1 (shared file), 4 segments from --cmd"
    assert parse_command("mpirun -np 8 ior -w -t 1m -b 1m -s 1").segments == 1
    per_task = parse_command("mpirun -np 8 ior -w -F -t 1m -b 1m -s 4")
    assert (per_task.segments, per_task.file_size) == (4, 4 * MiB)


def test_ior_reorder_tasks_is_read_and_checked_against_a_recorded_command() -> None:
    # -C: each task reads back another node's data, which decides whether GPFS reads hit the
    # client's pagepool; it was a no-effect flag until session 24.
    assert parse_command("mpirun -np 2 ior -w -r -C -t 1m -b 1g").reorder_tasks
    assert not parse_command("mpirun -np 2 ior -w -r -t 1m -b 1g").reorder_tasks
    recorded = parse_command("mpirun -np 2 ior -w -r -t 1m -b 1g").model_copy(
        update={"command": "mpirun -np $n ior -w -r -C -t 1m -b 1g", "threads": [2]}
    )
    assert "gives reorder_tasks yes, the workload no" in " ".join(command_mismatches(recorded))


def test_a_mapping_the_command_does_not_give_is_said_so() -> None:
    # It read "the workload None".
    placed = parse_command("mpirun -npernode 2 -np 4 ior -w -t 1m -b 1g")
    unplaced = placed.model_copy(update={"command": "mpirun -np $n ior -w -t 1m -b 1g", "threads": [4]})
    said = " ".join(command_mismatches(unplaced))
    assert "None" not in said and "the command gives per_node" not in said
    assert "the command gives no per_node, the workload 2" in said


def test_iozone_takes_one_host_list() -> None:
    with pytest.raises(WorkloadError, match=r"-\+m is given twice \(a and b\)"):
        parse_command("iozone -i 0 -r 1m -s 1g -t 2 -+m a -+m b")
