"""lct.dask against the single-process answers: read_table and keys split
at byte ranges of many sizes on every fixture, on a damaged generated
trace, and on traces whose bin values imitate whole frames (where a
range's resync lands inside a value, the seam check must catch it and the
file is read whole); then on a distributed.LocalCluster with 2 worker
processes.  Needs dask (Debian: python3-dask, python3-distributed)."""
import logging
import os
import shutil
import struct
import sys
import time
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import FIXTURES, Skip, run  # noqa: E402
from test_tables import damaged_trace  # noqa: E402

import lct  # noqa: E402


def dask_mods():
    try:
        import dask
        import dask.dataframe  # noqa: F401
        import pandas  # noqa: F401
    except ImportError:
        raise Skip("dask is not installed for this interpreter")
    import lct.dask as ld
    return dask, ld


COLUMNS = ("idx", "offset", "t_mono", "t_wall", "qualname", "args_bytes")


def rows_of(df):
    return [(int(r.idx), int(r.offset), r.t_mono, r.t_wall, str(r.qualname),
             int(r.args_bytes)) for r in df.itertuples()]


def single(path):
    try:
        return rows_of(lct.read_pandas(path, columns=COLUMNS))
    except (OSError, ValueError):
        return None  # refused: nothing to split


def check_splits(path, splits, ld):
    want = single(path)
    if want is None:
        return 0
    kwant = lct.keys(path)
    for split in splits:
        got = ld.read_table(path, columns=COLUMNS, split_bytes=split).compute()
        assert rows_of(got) == want, (path, split)
        assert set(got["file"]) <= {path}
        k = ld.keys(path, split_bytes=split).compute()
        assert k["obj_id"].tolist() == kwant["obj_id"].tolist(), (path, split)
        assert k["idx"].tolist() == kwant["idx"].tolist(), (path, split)
    return 1


def test_every_fixture_at_every_split():
    dask, ld = dask_mods()
    with dask.config.set(scheduler="synchronous"):
        n = 0
        for name in sorted(os.listdir(FIXTURES)):
            if name.endswith(".lct"):
                path = os.path.join(FIXTURES, name)
                size = os.path.getsize(path)
                n += check_splits(path, (17, 31, 64, 100, 257, 1000,
                                         max(size // 2, 1)), ld)
        assert n >= 8, n


def test_a_damaged_trace_at_several_splits():
    dask, ld = dask_mods()
    path = damaged_trace()
    size = os.path.getsize(path)
    with dask.config.set(scheduler="synchronous"):
        check_splits(path, (size // 7, size // 3, 100003), ld)


def test_auto_splits_a_narrow_read_only_for_threads_to_read_it():
    dask, ld = dask_mods()
    path = damaged_trace()
    size = os.path.getsize(path)
    want = single(path)
    saved = ld.SPLIT_BYTES
    ld.SPLIT_BYTES = size // 5 + 1  # five ranges at the default
    try:
        # two files: each has half the threads (rounded up) to read its
        # ranges; as many files as threads are read whole
        cases = (("synchronous", None, COLUMNS, 1),
                 ("threads", 2, COLUMNS, 1),
                 ("threads", 3, COLUMNS, 2),
                 ("threads", 9, COLUMNS, 5),
                 ("synchronous", None, COLUMNS + ("args",), 5))
        for scheduler, workers, columns, parts in cases:
            with dask.config.set(scheduler=scheduler, num_workers=workers):
                t = ld.read_table([path, path], columns=columns)
                assert t.npartitions == 2 * parts, (scheduler, workers,
                                                     columns)
                assert rows_of(t.compute()) == want + want
                assert ld.read_table(path, columns=COLUMNS,
                                     split_bytes=size // 7 + 1
                                     ).npartitions == 7
        # Without num_workers, the threads dask's own pool takes: its count
        # of the CPUs the process may use (under taskset -c 0, one).
        import dask.system
        for cpus, parts in ((1, 1), (3, 3)):
            saved_cpus = dask.system.CPU_COUNT
            dask.system.CPU_COUNT = cpus
            try:
                with dask.config.set(scheduler="threads"):
                    assert ld.read_table(path, columns=COLUMNS
                                         ).npartitions == parts, cpus
            finally:
                dask.system.CPU_COUNT = saved_cpus
    finally:
        ld.SPLIT_BYTES = saved


def test_a_file_read_whole_is_one_task_with_the_steps_after_it():
    """Files read whole come from dd.from_map, whose reads dask fuses with
    a groupby's chunk: a task a file and the aggregate, where
    from_delayed left a read and a chunk a file.  A split file keeps its
    ranges, seams and picks, with the same answer."""
    dask, ld = dask_mods()
    path = damaged_trace()
    d = tempfile.mkdtemp(prefix="lct-dask-")
    try:
        other = os.path.join(d, "other.lct")
        shutil.copyfile(path, other)
        files = [path, other]
        for name, frame in (
                ("read_table", ld.read_table(files, columns=("qualname",),
                                             split_bytes=None)),
                ("keys", ld.keys(files, split_bytes=None))):
            col = "qualname" if name == "read_table" else "op"
            size = frame.groupby(["file", col], observed=True).size()
            graph = dict(size.__dask_optimize__(size.__dask_graph__(),
                                                size.__dask_keys__()))
            assert len(graph) == len(files) + 1, (name, sorted(graph))
            with dask.config.set(scheduler="synchronous"):
                got = size.compute()
            assert int(got.sum()) == 2 * int(got.xs(path, level=0).sum())
        with dask.config.set(scheduler="synchronous"):
            whole = ld.read_table(files, columns=COLUMNS,
                                  split_bytes=None).compute()
            split = ld.read_table(files, columns=COLUMNS,
                                  split_bytes=os.path.getsize(path) // 3
                                  ).compute()
        assert rows_of(whole) == rows_of(split) == single(path) * 2
    finally:
        shutil.rmtree(d, True)


# MARK: frames inside values


def mp_str(s):
    b = s.encode()
    return (bytes([0xa0 | len(b)]) if len(b) < 32
            else b"\xd9" + bytes([len(b)])) + b


def mp_bin(b):
    return b"\xc5" + struct.pack(">H", len(b)) + b


def record(t, qualname, args):
    """A record frame as the recorder writes it; args: (name, bytes) of
    already-encoded values."""
    body = (b"\x85" + mp_str("type") + mp_str("record") +
            mp_str("t_mono") + b"\xcb" + struct.pack(">d", t) +
            mp_str("t_wall") + b"\xcb" + struct.pack(">d", 1.7e9 + t) +
            mp_str("qualname") + mp_str(qualname) +
            mp_str("args") + bytes([0x80 | len(args)]) +
            b"".join(mp_str(k) + v for k, v in args))
    return struct.pack(">I", len(body)) + body


def imitation_trace(path, n=300):
    """Records whose bin values hold whole frames (a plausible length and
    the record opening): a resync that lands inside one finds a frame
    that is not there."""
    with open(os.path.join(FIXTURES, "clean.lct"), "rb") as f:
        head = f.read(4)
        header = head + f.read(struct.unpack(">I", head)[0])
    out = [header]
    for i in range(n):
        fake = record(i + 0.5, "Fake.call", [("x", b"\x01")]) * 3
        out.append(record(float(i), "S.call_%d" % (i % 5),
                          [("blob", mp_bin(fake)), ("i", b"\x07")]))
    with open(path, "wb") as f:
        f.write(b"".join(out))


def test_frames_inside_values_are_caught_at_the_seams():
    dask, ld = dask_mods()
    d = tempfile.mkdtemp(prefix="lct-dask-")
    try:
        path = os.path.join(d, "imitation.lct")
        imitation_trace(path)
        one = lct.read_pandas(path, columns=COLUMNS)
        assert len(one) == 300 and not (one["qualname"] == "Fake.call").any()
        # some split lands inside a bin value: its seam must be seen to fail
        size = os.path.getsize(path)
        failed = 0
        for split in range(97, 2000, 97):
            ranges = [(a, b) for a, b in ld._ranges(path, split)]
            infos = [ld._table_part(path, a, b, COLUMNS, None, None, None)[1]
                     for a, b in ranges]
            failed += not ld._seams(infos)[0]
        assert failed > 0, "no split resynced inside a value: the test is weak"
        with dask.config.set(scheduler="synchronous"):
            check_splits(path, (97, 333, 1001, size // 3), ld)
    finally:
        shutil.rmtree(d, True)


# MARK: on a cluster


def test_on_a_local_cluster_with_two_worker_processes():
    dask, ld = dask_mods()
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise Skip("distributed is not installed for this interpreter")
    path = damaged_trace()
    split = os.path.getsize(path) // 5
    want = single(path)
    kwant = lct.keys(path)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, \
            Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        t = ld.read_table([path, path], columns=COLUMNS, split_bytes=split)
        assert t.npartitions >= 10
        got = t.compute()
        assert rows_of(got) == want + want
        saved = ld.SPLIT_BYTES
        ld.SPLIT_BYTES = split
        try:  # auto: two files for the cluster's 2 threads, read whole;
            # one file, in two ranges
            t = ld.read_table([path, path], columns=COLUMNS)
            assert t.npartitions == 2
            assert rows_of(t.compute()) == want + want
            assert ld.read_table(path, columns=COLUMNS).npartitions == 2
        finally:
            ld.SPLIT_BYTES = saved
        per_op = t.groupby("qualname", observed=True).size().compute()
        assert int(per_op.sum()) == 2 * len(want)
        k = ld.keys(path, split_bytes=split)
        reuse = k.groupby("obj_id")["idx"].count().compute().sort_index()
        import pandas as pd
        wreuse = pd.Series(kwant["obj_id"]).value_counts().sort_index()
        assert reuse.tolist() == wreuse.tolist()
        assert reuse.index.tolist() == wreuse.index.tolist()
        # the workers' warnings reach this process's lct logger, once each,
        # naming the file, however often the frame is computed (this
        # test's earlier computes said them already, before the handler)
        said = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = lambda record: said.append(record.getMessage())
        logging.getLogger("lct").addHandler(handler)
        lct.dask._SAID.clear()
        try:
            for _ in range(2):
                ld.read_table(path, columns=COLUMNS).compute()
            st = ld.stats([path])
            deadline = time.monotonic() + 10
            while len(said) < 6 and time.monotonic() < deadline:
                time.sleep(0.1)  # events come through the scheduler
            time.sleep(0.5)
        finally:
            logging.getLogger("lct").removeHandler(handler)
        assert st.skipped.tolist() == [3]
        assert len([m for m in said if m.startswith(
            f"lct.dask.read_table: {path}: skipping")]) == 3, said
        assert len([m for m in said if m.startswith(
            f"lct.dask.stats: {path}: skipping")]) == 3, said


def test_tune_workers_keeps_freed_memory_in_the_workers():
    dask, ld = dask_mods()
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise Skip("distributed is not installed")
    base = "distributed.nanny.pre-spawn-environ."
    names = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
    saved = {k: dask.config.get(base + k, None) for k in names}
    saved_env = {k: os.environ.get(k) for k in names}
    try:
        before = ld.tune_workers(1 << 28)
        assert before == saved, before
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, \
                Client(cluster) as client:
            env = list(client.run(lambda: (
                os.environ.get("MALLOC_TRIM_THRESHOLD_"),
                os.environ.get("MALLOC_MMAP_THRESHOLD_"))).values())
        assert env == [(str(1 << 28), str(1 << 28))], env
    finally:
        dask.config.set({base + k: v for k, v in saved.items()})
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


if __name__ == "__main__":
    sys.exit(run(globals()))
