"""lct.read_table, read_pandas, keys and mrc against the lct tool's own
answers (dump, keys, mrc) on a generated trace with damage in it, on one
thread and several; bounded allocations; the GIL released while the
library scans.  Needs numpy and pandas (Debian: python3-numpy,
python3-pandas)."""
import atexit
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import FIXTURES, LCT, Skip, piped, run  # noqa: E402

import lct  # noqa: E402
from lct import _lct  # noqa: E402

_trace = None


def np():
    try:
        import numpy
    except ImportError:
        raise Skip("numpy is not installed for this interpreter")
    return numpy


def damaged_trace():
    """30,000 generated records with three frames broken in different
    thirds of the file (a byte no msgpack value starts with)."""
    global _trace
    if _trace:
        return _trace
    if not os.path.exists(LCT):
        raise Skip(f"no lct tool at {LCT}")
    d = tempfile.mkdtemp(prefix="lct-py-")
    atexit.register(shutil.rmtree, d, True)  # 53 MB: gone with the run
    path = os.path.join(d, "t.lct")
    subprocess.run([LCT, "gen", "-n", "30000", path], check=True)
    with lct.TraceReader(path) as r:
        offsets = [x.offset for x in r.records()]
    with open(path, "r+b") as f:
        for i in (4000, 15000, 26000):
            f.seek(offsets[i] + 4)
            f.write(b"\xc1")
    _trace = path
    return path


def tool(*args):
    return subprocess.run([LCT, *args], capture_output=True, text=True).stdout


def test_read_table_is_what_dump_prints():
    numpy = np()
    path = damaged_trace()
    lines = tool("dump", "-q", "--fields", "idx,offset,t_mono,t_wall,qualname",
                 path).splitlines()
    want = [json.loads(x) for x in lines]
    assert len(want) == 29997
    for threads in (1, 2, 4):
        t = lct.read_table(path, threads=threads)
        assert t["stats"]["skipped"] == 3
        for c in ("idx", "offset", "args_bytes"):  # signed: differences work
            assert t[c].dtype == numpy.int64, c
        assert t["idx"].tolist() == [w["idx"] for w in want]
        assert t["offset"].tolist() == [w["offset"] for w in want]
        assert t["t_mono"].tolist() == [w["t_mono"] for w in want]
        assert t["t_wall"].tolist() == [w["t_wall"] for w in want]
        cats = t["qualname_categories"]
        assert [cats[c] for c in t["qualname"]] == [w["qualname"] for w in want]
        ops = t["op_categories"]
        assert [ops[c] for c in t["op"]] == \
            [w["qualname"].rsplit(".", 1)[-1] for w in want]


def test_args_as_json_text_only_when_asked():
    np()
    path = damaged_trace()
    t = lct.read_table(path, columns=["t_mono"])
    assert "args" not in t and "qualname" not in t
    t = lct.read_table(path, columns=["args", "args_bytes"], threads=2)
    lines = tool("dump", "-q", "--fields", "args", path).splitlines()
    assert [json.loads(a) for a in t["args"][:500]] == \
        [json.loads(x)["args"] for x in lines[:500]]
    assert len(t["args"]) == len(lines)
    assert (t["args_bytes"] > 0).all()


def test_selection_is_dumps():
    np()
    path = damaged_trace()
    for opts, kw in (
            (["--qualname", "reserve_write"], {"qualname": "reserve_write"}),
            (["--qualname", "*finish*", "--qualname", "x"],
             {"qualname": ["*finish*", "x"]}),
            (["--since", "1.5", "--until", "2.5"], {"since": 1.5,
                                                    "until": 2.5}),
            (["--since", "2025-12-01T14:40:01Z"],
             {"since": "2025-12-01T14:40:01Z"})):
        want = [json.loads(x)["idx"] for x in
                tool("dump", "-q", "--fields", "idx", *opts,
                     path).splitlines()]
        got = lct.read_table(path, columns=["idx"], threads=2, **kw)["idx"]
        assert got.tolist() == want, opts
        assert 0 < len(want) < 29997 or opts[0] == "--since", opts


def test_read_pandas_ops_per_second():
    try:
        import pandas as pd
    except ImportError:
        raise Skip("pandas is not installed for this interpreter")
    path = damaged_trace()
    df = lct.read_pandas(path)
    assert isinstance(df["qualname"].dtype, pd.CategoricalDtype)
    assert len(df) == 29997
    rate = df.groupby("op", observed=True).size() / df["t_mono"].max()
    stat = json.loads(tool("stat", "-q", "--json", path))
    for row in stat["ops"]:
        assert abs(rate[row["op"]] * stat["duration"] - row["count"]) < 1e-6


def test_keys_are_lct_keys():
    np()
    path = damaged_trace()
    for opts, kw in (([], {}), (["--all"], {"all_calls": True}),
                     (["--read", "finish_write"], {"read": "finish_write"})):
        rows = list(csv.reader(io.StringIO(tool("keys", "-q", "--csv", *opts,
                                                path))))
        head, rows = rows[0], rows[1:]
        k = lct.keys(path, **kw)
        assert len(k) == len(rows) > 1000, opts
        assert list(k.columns) == head
        assert not [c for c in k.columns if k[c].dtype == object]
        assert k.attrs["stats"]["skipped"] == 3
        assert k.attrs["stats"]["references"] == len(rows)
        for i in (0, 1, len(rows) // 2, len(rows) - 1):
            got = k.iloc[i]
            want = dict(zip(head, rows[i]))
            assert int(want["idx"]) == got["idx"]
            assert want["op"] == got["op"]
            assert want["chunk_hash"] == got["chunk_hash"]
            assert want["model_name"] == got["model_name"]
            assert int(want["kv_rank"]) == got["kv_rank"]
            assert want["cache_salt"] == got["cache_salt"]
            assert want["obj_id"] == f"{int(got['obj_id']):016x}"
            assert int(want["bytes"]) == got["bytes"]
    # the older spelling still works, and says it is the older one
    import warnings
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert len(lct.keys(path, all=True)) == len(lct.keys(
            path, all_calls=True))
    assert any(issubclass(w.category, DeprecationWarning) for w in said)


def test_mrc_is_lct_mrc():
    np()
    path = damaged_trace()
    for opts, kw in (([], {}), (["--requests", "all"], {"requests": "all"}),
                     (["--sample", "0.1", "--seed", "3"],
                      {"sample": 0.1, "seed": 3})):
        rows = list(csv.DictReader(io.StringIO(tool("mrc", "-q", "--csv",
                                                    *opts, path))))
        m = lct.mrc(path, **kw)
        assert len(rows) == len(m) > 5, opts
        assert m["keys"].dtype == "int64"
        for row, k, h in zip(rows, m["keys"], m["hit_ratio"]):
            assert int(row["keys"]) == k
            assert float(row["hit_ratio"]) == h, (opts, k)
        if "sample" in kw:
            assert [float(r["hit_ratio_min"]) for r in rows] == \
                m["hit_ratio_min"].tolist()
            assert len(m.attrs["totals"]) == 9
        else:
            assert len(m.attrs["totals"]) == 1


def test_an_l2_trace_streams_its_lookups_and_stores():
    """An L2-level trace's key stream is its lookups and stores, as lct
    mrc reads it (the module's defaults take both levels' calls)."""
    np()
    path = os.path.join(os.path.dirname(FIXTURES), "..", "examples",
                        "l2-sample.lct")
    rows = list(csv.DictReader(io.StringIO(tool("mrc", "-q", "--csv",
                                                path))))
    m = lct.mrc(path)
    assert len(rows) == len(m) > 5
    for row, (_, got) in zip(rows, m.iterrows()):
        assert float(row["hit_ratio"]) == got["hit_ratio"], got["keys"]
    assert m["hit_ratio"].max() > 0.3


def test_policies_are_lct_mrc_policy():
    np()
    path = damaged_trace()
    for opts, kw in (([], {}), (["--requests", "all"], {"requests": "all"})):
        rows = list(csv.DictReader(io.StringIO(tool(
            "mrc", "-q", "--csv", "--policy", "arc,lru,belady,s3fifo", *opts,
            path))))
        m = lct.mrc(path, policies=["arc", "lru", "belady", "s3fifo"], **kw)
        assert len(rows) == len(m) > 5, opts
        for row, (_, got) in zip(rows, m.iterrows()):
            for name in ("arc", "lru", "belady", "s3fifo"):
                col = name + "_hit_ratio"
                assert float(row[col]) == got[col], (opts, name, got["keys"])
            assert got["lru_hit_ratio"] == got["hit_ratio"]
            assert got["belady_hit_ratio"] >= got["arc_hit_ratio"]
    # LMCache's L1 policies act on a record's keys together: the module
    # must end each call as the tool does, or they would hold nothing
    mp = ["lmcache-lru", "lmcache-arc", "lmcache-s3fifo", "mru"]
    rows = list(csv.DictReader(io.StringIO(tool(
        "mrc", "-q", "--csv", "--policy", ",".join(mp), path))))
    m = lct.mrc(path, policies=mp)
    assert m["lmcache-lru_hit_ratio"].max() > 0.1
    for row, (_, got) in zip(rows, m.iterrows()):
        for name in mp:
            col = name + "_hit_ratio"
            assert float(row[col]) == got[col], (name, got["keys"])
    rows = list(csv.DictReader(io.StringIO(tool(
        "mrc", "-q", "--csv", "--prefix", "--policy", "lru,sieve", path))))
    m = lct.mrc(path, prefix=True, policies=["lru", "sieve"])
    for row, (_, got) in zip(rows, m.iterrows()):
        for col in ("sieve_hit_ratio", "sieve_token_hit_ratio",
                    "lru_token_hit_ratio"):
            assert float(row[col]) == got[col], (col, got["keys"])
        assert got["lru_token_hit_ratio"] == got["token_hit_ratio"]
    for kw, error, said in (({"policies": ["lrux"]}, ValueError,
                             "unknown policy 'lrux' (known: fifo, lru"),
                            ({"policies": ["arc"], "sample": 0.5},
                             ValueError, "no sample"),
                            ({"policies": [3]}, TypeError, "names"),
                            ({"policies": ["lmcache-isolated-lru"]},
                             ValueError, "quotas")):
        try:
            lct.mrc(path, **kw)
        except error as e:
            assert said in str(e), (kw, e)
        else:
            raise AssertionError(f"{kw} should be refused")


def test_the_prefix_curve_is_lct_mrc_prefix():
    np()
    path = damaged_trace()
    for opts, kw in ((["--prefix"], {"prefix": True}),
                     (["--prefix", "--lookups-only", "--chunk-size", "16"],
                      {"prefix": True, "lookups_only": True,
                       "chunk_size": 16})):
        rows = list(csv.DictReader(io.StringIO(tool("mrc", "-q", "--csv",
                                                    *opts, path))))
        m = lct.mrc(path, **kw)
        assert len(rows) == len(m) > 5, opts
        for row, (_, got) in zip(rows, m.iterrows()):
            assert int(row["keys"]) == got["keys"]
            assert float(row["hit_ratio"]) == got["hit_ratio"], opts
            assert float(row["token_hit_ratio"]) == got["token_hit_ratio"]
        t = m.attrs["totals"][0]
        assert t["prefix"] and t["calls"] > 0 and t["positions"] > 0
        # a record's keys are one call; a chunk position is as many keys
        # as the call has kv ranks
        k = lct.keys(path)
        per_call = k[k.op == "read"].groupby("idx").agg(
            n=("kv_rank", "size"), ranks=("kv_rank", "nunique"))
        assert t["calls"] == len(per_call)
        assert t["positions"] == int(
            (-(-per_call.n // per_call.ranks)).sum())
        # the leading run is never longer than the keys found (over the
        # same stream: writes too)
        if "lookups_only" not in kw:
            per_key = lct.mrc(path).set_index("keys").hit_ratio
            both = m.set_index("keys").hit_ratio.reindex(per_key.index)
            assert (both.dropna() <= per_key[both.notna()]).all()
        assert m.attrs["chunk_size"] == kw.get("chunk_size", None) or \
            "chunk_size" not in kw
        if "chunk_size" in kw:
            assert m.attrs["tokens"] == 16 * t["positions"]
    try:
        lct.mrc(path, prefix=True, sample=0.1)
    except ValueError as e:
        assert "prefix" in str(e)
    else:
        raise AssertionError("prefix with a sample should be refused")


def test_the_token_hit_ratio_of_a_byte_capacity_is_lct_mrcs():
    numpy = np()
    d = tempfile.mkdtemp(prefix="lct-py-")
    try:
        mix = os.path.join(d, "mix.lct")
        subprocess.run([LCT, "gen", "-n", "1500", "--mix", mix], check=True,
                       capture_output=True)
        rows = list(csv.DictReader(io.StringIO(
            tool("mrc", "-q", "--csv", "--prefix", mix))))
        m = lct.mrc(mix, prefix=True)
        assert len(rows) == len(m) > 5
        for row, (_, got) in zip(rows, m.iterrows()):
            assert float(row["byte_token_hit_ratio"]) == \
                got["byte_token_hit_ratio"]
        # keys of two sizes: the byte capacity's column is its own
        assert (m.byte_token_hit_ratio != m.token_hit_ratio).any()
        # one size: keys x that size says it all, and the column is NaN
        one = lct.mrc(damaged_trace(), prefix=True)
        assert numpy.isnan(one.byte_token_hit_ratio).all()
        assert "byte_token_hit_ratio" not in lct.mrc(mix).columns
    finally:
        shutil.rmtree(d, True)


def test_read_table_allocates_per_column_not_per_record():
    np()
    path = damaged_trace()
    before = _lct.table_allocations()
    t = lct.read_table(path, columns=["idx", "t_mono", "qualname"], threads=1)
    grown = _lct.table_allocations() - before
    # three columns doubling from 4 KiB to 240 KiB, and the names table
    assert len(t["idx"]) == 29997
    assert grown < 40, grown


def test_columns_are_the_blocks_they_were_built_in():
    """lct.keys and read_table hand numpy the memory their numeric
    columns were built in, not a copy (pandas makes its own categorical
    codes); a column is writable and outlives its frame."""
    import gc
    np()
    path = damaged_trace()
    k = lct.keys(path)
    t = lct.read_table(path, columns=["idx", "t_mono", "qualname"],
                       threads=2)
    for arr in (k["idx"].values, k["obj_id"].values, t["idx"],
                t["t_mono"]):
        base = arr
        while getattr(base, "base", None) is not None:
            base = base.base
        assert type(base).__name__ == "Block", type(base)
    ids = k["obj_id"].values
    first, last = int(ids[0]), int(ids[-1])
    rank = k["kv_rank"].values
    rank[0] = 12345
    assert k["kv_rank"].iloc[0] == 12345
    idx = t["idx"]
    n = len(idx)
    del k, t
    gc.collect()
    assert int(ids[0]) == first and int(ids[-1]) == last
    assert rank[0] == 12345
    assert list(idx[:3]) == [0, 1, 2] and len(idx) == n


def test_the_gil_is_released_while_scanning():
    np()
    path = damaged_trace()
    done = threading.Event()

    def scan():
        try:
            for _ in range(3):
                lct.read_table(path, columns=["t_mono"], threads=1)
        finally:
            done.set()

    t = threading.Thread(target=scan)
    t.start()
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    # held through the scans, the GIL would leave this loop a few turns
    assert spins > 1000, spins


def test_a_pipe_reads_the_same_table():
    np()
    path = os.path.join(FIXTURES, "malformed_mixed.lct")
    want = lct.read_table(path, columns=["idx", "offset"])
    with piped(path) as pipe:
        got = lct.read_table(pipe, columns=["idx", "offset"], threads=4)
    assert got["idx"].tolist() == want["idx"].tolist()
    assert got["offset"].tolist() == want["offset"].tolist()
    assert got["stats"]["skipped"] == 5



def test_a_missing_numpy_names_the_interpreter_and_the_fix():
    saved = sys.modules.get("numpy", False)
    sys.modules["numpy"] = None  # import numpy now raises ImportError
    try:
        lct._numpy()
        raise AssertionError("no ImportError")
    except ImportError as e:
        text = str(e)
    finally:
        if saved is False:
            del sys.modules["numpy"]
        else:
            sys.modules["numpy"] = saved
    assert sys.executable in text, text
    assert "Python %d.%d" % sys.version_info[:2] in text, text
    if os.path.realpath(sys.executable).startswith("/usr/bin/"):
        assert "apt-get install python3-numpy" in text, text
    else:
        assert sys.executable + " -m pip install numpy" in text, text


if __name__ == "__main__":
    sys.exit(run(globals()))
