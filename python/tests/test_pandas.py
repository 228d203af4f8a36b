"""What a pandas or Dask user computes with: signed columns, DataFrames
for keys and curves, warnings that name the file and carry its offset,
per-file stats, datetimes, progress, and the small things a new user
meets first (version, dir, repr, one column as a str, directories).
Needs numpy and pandas (Debian: python3-numpy, python3-pandas); the Dask
tests need python3-dask."""
import logging
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import FIXTURES, TOP, Skip, run  # noqa: E402

import lct  # noqa: E402

SAMPLE = os.path.join(TOP, "examples", "sample.lct")
DAMAGED = os.path.join(FIXTURES, "malformed_mixed.lct")


def pd():
    try:
        import numpy  # noqa: F401
        import pandas
    except ImportError:
        raise Skip("numpy and pandas are not installed for this interpreter")
    return pandas


class Said(logging.Handler):
    """Every record the lct logger says, kept whole."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record)

    def __enter__(self):
        logging.getLogger("lct").addHandler(self)
        return self

    def __exit__(self, *_):
        logging.getLogger("lct").removeHandler(self)


def test_counts_indexes_offsets_and_sizes_are_signed():
    pd()
    df = lct.read_pandas(SAMPLE)
    for c in ("idx", "offset", "args_bytes"):
        assert df[c].dtype == "int64", c
    assert (df.idx - 1).iloc[0] == -1
    assert (df.args_bytes - 10**6).max() < 0
    k = lct.keys(SAMPLE)
    assert k.idx.dtype == "int64" and k.bytes.dtype == "int64"
    assert (k.bytes - 2**40).max() < 0
    m = lct.mrc(SAMPLE)
    assert m["keys"].dtype == "int64"


def test_keys_and_mrc_are_dataframes_without_object_columns():
    pandas = pd()
    k = lct.keys(SAMPLE)
    assert isinstance(k, pandas.DataFrame)
    assert [c for c in k.columns if k[c].dtype == object] == []
    assert [c for c, t in lct.KEY_COLUMNS] == list(k.columns)
    for c, t in lct.KEY_COLUMNS:
        assert str(k[c].dtype) == t, c
    assert len(k) == 4035 and k.attrs["stats"]["records"] == 3000
    # the hash as lct keys prints it, the id as a number whose hex it prints
    first = k.iloc[0]
    assert first.chunk_hash == "e3eeceac5ad59df9" * 4
    assert f"{first.obj_id:016x}" == "79b07ad12a58c7e8"
    m = lct.mrc(SAMPLE)
    assert isinstance(m, pandas.DataFrame)
    assert pandas.DataFrame(m).shape == m.shape
    assert list(m.columns) == ["keys", "bytes", "hit_ratio", "miss_ratio",
                               "byte_hit_ratio", "hit_ratio_min",
                               "hit_ratio_max"]
    assert m.attrs["totals"][0]["reads"] == 2765
    assert m.attrs["requests"] == "reads"
    assert (m.hit_ratio + m.miss_ratio - 1).abs().max() < 1e-12


def test_warnings_name_the_file_and_carry_path_and_offset():
    pd()
    for call, who in ((lambda: lct.read_table(DAMAGED), "read_table"),
                      (lambda: lct.read_pandas(DAMAGED), "read_table"),
                      (lambda: lct.keys(DAMAGED), "keys"),
                      (lambda: lct.mrc(DAMAGED), "mrc")):
        with Said() as said:
            call()
        assert len(said.records) == 5, who
        for r in said.records:
            assert r.getMessage().startswith(f"{who}: {DAMAGED}: "), \
                r.getMessage()
            assert r.path == DAMAGED
            assert f"offset {r.offset}" in r.getMessage()
    # the drop-in keeps the reference reader's words, with the same facts
    with Said() as said, lct.TraceReader(DAMAGED) as rd:
        list(rd.records())
    assert said.records[0].getMessage().startswith("TraceReader: skipping")
    assert said.records[0].path == DAMAGED and said.records[0].offset == 1102


def test_stats_say_what_reading_found():
    pd()
    df = lct.read_pandas(DAMAGED)
    assert df.attrs["stats"] == {"records": 13, "skipped": 5,
                                 "truncated": False, "shrank": False,
                                 "path": DAMAGED}
    t = lct.read_table(DAMAGED, columns="t_mono")
    assert t["stats"]["skipped"] == 5 and list(t) == ["t_mono", "stats"]


def test_one_column_as_a_str_and_datetimes():
    pandas = pd()
    df = lct.read_pandas(SAMPLE, columns="t_mono")
    assert list(df.columns) == ["t_mono"]
    df = lct.read_pandas(SAMPLE, columns=["t_wall"], datetimes=True)
    assert str(df.t_wall.dtype) == "datetime64[ns, UTC]"
    plain = lct.read_table(SAMPLE, columns=["t_wall"])["t_wall"]
    back = (df.t_wall - pandas.Timestamp(0, tz="UTC")).dt.total_seconds()
    assert (back - plain).abs().max() < 1e-6
    per_second = df.set_index("t_wall").resample("1s").size()
    assert int(per_second.sum()) == 3000


def test_progress_is_reported_for_big_files():
    pd()
    seen = []
    old = lct.PROGRESS_BYTES
    lct.PROGRESS_BYTES = 1
    try:
        lct.read_table(SAMPLE, columns="idx",
                       progress=lambda done, total: seen.append((done, total)))
        lct.keys(SAMPLE, progress=lambda d, t: seen.append((d, t)))
    finally:
        lct.PROGRESS_BYTES = old
    size = os.path.getsize(SAMPLE)
    # each read starts at 0 and ends at the whole file, never going back
    starts = [i for i, s in enumerate(seen) if s == (0, size)]
    assert len(starts) == 2 and seen[-1] == (size, size), seen
    for part in (seen[:starts[1]], seen[starts[1]:]):
        assert part[-1] == (size, size)
        done = [d for d, _ in part]
        assert done == sorted(done) and all(t == size for _, t in part)
    seen.clear()
    lct.read_table(SAMPLE, columns="idx",
                   progress=lambda d, t: seen.append(d))
    assert seen == []  # under 256 MiB: nothing to report


def test_the_first_things_a_new_user_meets():
    import re
    assert re.fullmatch(r"\d+\.\d+\.\d+", lct.__version__)
    names = dir(lct)
    assert "annotations" not in names and "logger" not in names
    assert "read_pandas" in names and "__version__" in names
    r = lct.TraceReader(SAMPLE)
    assert repr(r) == f"<lct.TraceReader {SAMPLE!r} open>"
    r.close()
    assert repr(r).endswith(" closed>")


def test_sim_is_lct_sims_report():
    pd()
    import json
    import subprocess
    from support import LCT
    if not os.path.exists(LCT):
        raise Skip(f"no lct tool at {LCT}")
    for cli, kw in ((["--capacity", "4GiB"], {"capacity": "4GiB"}),
                    (["--capacity", "4GiB", "--policy", "arc"],
                     {"capacity": "4GiB", "policy": "arc"}),
                    (["--capacity", "100", "--policy", "s3fifo",
                      "--per-key"],
                     {"capacity": 100, "policy": "s3fifo", "per_key": True}),
                    (["--capacity", "128", "--l1", "64"],
                     {"capacity": 128, "l1": 64}),
                    (["--capacity", "128", "--l1", "64", "--l1-policy",
                      "sieve"],
                     {"capacity": 128, "l1": 64, "l1_policy": "sieve"}),
                    (["--capacity", "100", "--lookups-only"],
                     {"capacity": "100keys", "lookups_only": True})):
        want = json.loads(subprocess.run(
            [LCT, "sim", "-q", "--json", *cli, SAMPLE], check=True,
            capture_output=True, text=True).stdout)
        df = lct.sim(SAMPLE, **kw)
        a = df.attrs
        for k in ("requests", "evictions", "occupancy_keys", "chunks",
                  "hit_chunks", "capacity_keys", "key_bytes"):
            assert a[k] == want[k], (cli, k)
        assert a["token_hit_rate"] == want["token_hit_rate"], cli
        assert a["tokens"] == want["total_tokens"], cli
        for name in ("hit_prefix_chunks", "chunk_reuse", "span",
                     "lru_position"):
            for c in ("count", "max", "p25", "p50", "p99"):
                assert df.loc[name, c] == want[name][c], (cli, name, c)
        assert list(a["series"]["token_hit_rate"]) == \
            [p["token_hit_rate"] for p in want["series"]]
        if "l1" in kw:
            assert a["both_token_hit_rate"] == want["both_token_hit_rate"]
    # 4 GiB of the sample's 32 MiB keys, as LMCache sizes its chunks
    assert lct.sim(SAMPLE, "4GiB").attrs["capacity_keys"] == 128
    # another policy changes the hits; belady and unknown names refused
    assert lct.sim(SAMPLE, "4GiB", policy="sieve").attrs["hit_chunks"] != \
        lct.sim(SAMPLE, "4GiB").attrs["hit_chunks"]
    # LMCache's L1 policies under a pressure: the tool's own numbers
    cli = json.loads(subprocess.run(
        [LCT, "sim", "-q", "--json", "--capacity", "4GiB", "--policy",
         "lmcache-lru", "--watermark", "1", "--eviction-ratio", "0.05",
         SAMPLE], check=True, capture_output=True, text=True).stdout)
    a = lct.sim(SAMPLE, "4GiB", policy="lmcache-lru", watermark=1,
                eviction_ratio=0.05).attrs
    assert a["refused"] == cli["refused"] > 0
    assert a["hit_chunks"] == cli["hit_chunks"]
    assert lct.sim(SAMPLE, "4GiB", policy="lmcache-lru").attrs["refused"] == 0
    # IsolatedLRU by quotas: the tool's numbers; a quota of another unit
    # than the capacity, or quotas with another policy, refused
    cli = json.loads(subprocess.run(
        [LCT, "sim", "-q", "--json", "--capacity", "64GiB", "--policy",
         "lmcache-isolated-lru", "--quota", "=1GiB", SAMPLE], check=True,
        capture_output=True, text=True).stdout)
    a = lct.sim(SAMPLE, "64GiB", policy="lmcache-isolated-lru",
                quotas={"": "1GiB"}).attrs
    assert a["hit_chunks"] == cli["hit_chunks"] > 0
    assert a["evictions"] == cli["evictions"] > 0
    assert lct.sim(SAMPLE, "64GiB", policy="lmcache-isolated-lru").attrs[
        "hit_chunks"] == 0, "a salt without a quota keeps nothing"
    for kw in ({"quotas": {"": 100}}, {"quotas": {"": "1G"}, "policy": "lru"},
               {"quotas": {3: "1G"}}):
        try:
            lct.sim(SAMPLE, "64GiB", **{"policy": "lmcache-isolated-lru",
                                        **kw})
        except (ValueError, TypeError):
            continue
        raise AssertionError(f"{kw} should be refused")
    for kw in ({"watermark": 0}, {"eviction_ratio": 1.5},
               {"watermark": "x"}):
        try:
            lct.sim(SAMPLE, "4GiB", policy="lmcache-lru", **kw)
        except (ValueError, TypeError):
            continue
        raise AssertionError(f"{kw} should be refused")
    for bad in ("belady", "lrux"):
        try:
            lct.sim(SAMPLE, "4GiB", policy=bad)
        except ValueError as e:
            assert bad in str(e), e
            continue
        raise AssertionError(f"policy {bad!r} should be refused")
    for bad in (0, -3, "64X", "1.5keys", True, "2BB"):
        try:
            lct.sim(SAMPLE, bad)
        except (ValueError, TypeError):
            continue
        raise AssertionError(f"capacity {bad!r} should be refused")


def dask_ready():
    pd()
    try:
        import dask  # noqa: F401
        import lct.dask as ld
    except ImportError:
        raise Skip("dask is not installed for this interpreter")
    return ld


def traces_dir():
    d = tempfile.mkdtemp(prefix="lct-pandas-")
    shutil.copy(SAMPLE, os.path.join(d, "a.lct"))
    shutil.copy(DAMAGED, os.path.join(d, "b.lct"))
    shutil.copy(os.path.join(FIXTURES, "clean.lct"), os.path.join(d, "c.lct"))
    open(os.path.join(d, "notes.txt"), "w").close()
    return d


def imported_log(d, events):
    """LMCache lookup-log events (dicts) written to a log in d and read in
    with lct import lookup-logs; the trace's path.  Skips without the
    lct tool."""
    import json
    import subprocess
    from support import LCT
    if not os.path.exists(LCT):
        raise Skip(f"no lct tool at {LCT}")
    log = os.path.join(d, "lookup_hashes_20261206_000000_000000.jsonl")
    with open(log, "w") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")
    trace = os.path.join(d, "t.lct")
    subprocess.run([LCT, "import", "lookup-logs", "-q", log, trace],
                   check=True)
    return trace


def test_sim_counts_the_tokens_an_imported_log_states():
    """A log's seq_len (tail included), its own chunk_size and a lookup of
    no whole chunk count as LMCache's simulator counts them, in lct.sim as
    in lct sim: 300 + 600 + 100 tokens, 256 hit."""
    pd()
    import json
    import subprocess
    from support import LCT
    d = tempfile.mkdtemp()
    try:
        trace = imported_log(d, [{
            "timestamp": float(t), "request_id": f"r{t}",
            "model_name": "m", "chunk_size": 256, "seq_len": seq,
            "dtypes": ["bfloat16"], "shapes": [[2, 32, 256, 8, 128]],
            "chunk_hashes": hashes}
            for t, seq, hashes in ((1, 300, ["0xa1"]),
                                   (2, 600, ["0xa1", "0xb2"]), (3, 100, []))])
        want = json.loads(subprocess.run(
            [LCT, "sim", "-q", "--json", "--capacity", "1GiB", trace],
            check=True, capture_output=True, text=True).stdout)
        a = lct.sim(trace, "1GiB").attrs
        assert (a["requests"], a["tokens"], a["hit_tokens"]) == (3, 1000, 256)
        assert a["token_hit_rate"] == want["token_hit_rate"] == 256 / 1000
        assert a["tokens"] == want["total_tokens"]
    finally:
        shutil.rmtree(d)


def test_sim_refuses_bytes_when_the_first_lookup_weighs_nothing():
    """LMCache's simulator sizes chunks by the first lookup's layout and
    refuses a byte capacity when its dtypes are all outside its table
    ("torch.bfloat16"): lct.sim raises ValueError naming the record, as
    lct sim exits 1; a capacity in chunks needs no size."""
    pd()
    d = tempfile.mkdtemp()
    try:
        trace = imported_log(d, [{
            "timestamp": 1.0, "request_id": "e1", "model_name": "m",
            "chunk_size": 256, "seq_len": 512,
            "dtypes": ["torch.bfloat16"], "shapes": [[2, 32, 256, 8, 128]],
            "chunk_hashes": ["0xa1", "0xb2"]}])
        try:
            lct.sim(trace, "1GiB")
        except ValueError as e:
            assert "offset 178" in str(e) and "0 bytes a chunk" in str(e), e
        else:
            raise AssertionError("a byte capacity should be refused")
        assert lct.sim(trace, 2).attrs["requests"] == 1
    finally:
        shutil.rmtree(d)


def test_dask_takes_directories_and_agrees_with_the_single_process_types():
    ld = dask_ready()
    d = traces_dir()
    try:
        ddf = ld.read_table(d, columns="qualname")
        df = ddf.compute()
        assert sorted(set(df.file)) == [os.path.join(d, n) for n in
                                        ("a.lct", "b.lct", "c.lct")]
        k = ld.keys(d).compute()
        one = lct.keys(os.path.join(d, "a.lct"))
        for c, _t in lct.KEY_COLUMNS:
            assert str(k[c].dtype) == str(one[c].dtype) or (
                k[c].dtype.name == "category" == one[c].dtype.name), c
        st = ld.stats(os.path.join(d, "*.lct"))
        assert st.to_dict("records")[1] == {
            "file": os.path.join(d, "b.lct"), "records": 13, "skipped": 5,
            "truncated": False, "shrank": False, "error": None}
        assert st.records.tolist() == [3000, 13, 40]
        shutil.copy(os.path.join(FIXTURES, "schema_v3.lct"),
                    os.path.join(d, "d.lct"))
        st = ld.stats(d)
        assert "unsupported trace_schema_version 3" in st.error.iloc[3]
    finally:
        shutil.rmtree(d)


def test_dask_warnings_are_said_once_naming_the_file():
    ld = dask_ready()
    d = traces_dir()
    try:
        with Said() as said:
            ddf = ld.read_table(d)
            ddf.compute()
            ddf.compute()  # again: nothing new to say
        msgs = [r.getMessage() for r in said.records]
        assert len(msgs) == 5, msgs
        assert all(m.startswith(f"lct.dask.read_table: {d}/b.lct: ")
                   for m in msgs)
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    sys.exit(run(globals()))
