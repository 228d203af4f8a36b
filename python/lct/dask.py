"""Traces as Dask collections: analysis past one process and one machine.

``read_table`` and ``keys`` give a ``dask.dataframe`` with one partition
per file, and several per big file split at byte ranges of
``split_bytes``.  A range's first record is where liblct's resync scan
finds a frame (``lct_reader_resync``); a range reads records while they
start before the next range's first frame, found by the same rule, and
reports where its chain of frames then stood.  A file whose chains all
land exactly on the next range's start is read once, each record by one
partition; one where a chain does not (damage, or bytes inside a value
that look like a frame) is read again whole by its first partition, so
the answer is always the single-process one.  Each partition runs on a
worker with the file at the same path; only its rows travel.

Warnings (a skipped frame, a cut tail) name their file and offset and
are said once per process for a file as it is (its size and mtime): on
a distributed cluster a worker sends them to the client, whose ``lct``
logger says them, so they are seen where the computation was asked for.
``stats`` gives a per-file frame of what reading found.

Needs ``dask[dataframe]`` (Debian: python3-dask; python3-distributed for
a cluster).
"""

from __future__ import annotations

import glob as _glob
import os as _os

from . import (_DEFAULT_COLUMNS, KEY_COLUMNS, _frame, _keys_frame,
               _keys_raw, _logger, _table_from_raw, _table_raw)

__all__ = ["read_table", "keys", "stats", "paths", "tune_workers"]

#: A file is split when it is larger than this (bytes), by default.
SPLIT_BYTES = 256 * 1024 * 1024


def _dask():
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:
        from lct import _missing
        raise _missing("lct.dask needs", "dask[dataframe]", "python3-dask") \
            from None
    return dask, dd


def tune_workers(threshold=1 << 30):
    """Have the worker processes distributed starts from now on keep the
    memory they free, up to ``threshold`` bytes, instead of handing it
    back to the system at once.  distributed's nanny starts each worker
    with MALLOC_TRIM_THRESHOLD_=65536 (its
    ``distributed.nanny.pre-spawn-environ``), so glibc unmaps freed
    arrays and the next ones fault in fresh pages: reading 8 traces in a
    worker took 9,153 page faults against 1,176 in a plain process, and
    on a VM whose page faults are dear, 1.2 to 1.4 times the time
    (docs/scale.md).  Sets the trim and mmap
    thresholds of that environment in dask's config (for clusters made
    after the call; call it before ``LocalCluster``) and returns the
    values it replaced.  What it costs: a worker keeps the memory it
    freed, up to its peak, until it exits."""
    dask, _ = _dask()
    keys = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
    base = "distributed.nanny.pre-spawn-environ."
    before = {k: dask.config.get(base + k, None) for k in keys}
    dask.config.set({base + k: int(threshold) for k in keys})
    # A nanny takes a variable already in this process's environment over
    # the config, and a cluster started before leaves 65536 there; glibc
    # reads these only when a process starts, so this one is unchanged.
    for k in keys:
        _os.environ[k] = str(int(threshold))
    return before


def paths(paths_or_glob):
    """The files a str (a path, a directory or a glob), or a list of
    them, names, as dask.dataframe.read_csv takes them: a directory gives
    its *.lct files, a glob its matches, each sorted, in the order
    given."""
    items = [paths_or_glob] if isinstance(paths_or_glob, (str, bytes,
                                                          _os.PathLike)) \
        else list(paths_or_glob)
    out = []
    for p in items:
        p = _os.fsdecode(p)
        if _os.path.isdir(p):
            found = sorted(_glob.glob(_os.path.join(_glob.escape(p),
                                                    "*.lct")))
            if not found:
                raise FileNotFoundError(f"no .lct trace in directory {p!r}")
            out.extend(found)
        elif _glob.has_magic(p):
            found = sorted(_glob.glob(p))
            if not found:
                raise FileNotFoundError(f"no trace matches {p!r}")
            out.extend(found)
        else:
            out.append(p)
    return out


def _ranges(path, split_bytes):
    """(start, stop) byte ranges of path: (0, 0) is the whole file."""
    size = _os.path.getsize(path)
    if not split_bytes or size <= split_bytes:
        return [(0, 0)]
    n = -(-size // split_bytes)
    return [(k * split_bytes, (k + 1) * split_bytes if k + 1 < n else 0)
            for k in range(n)]


def _held():
    """A log that holds a range's warnings until its seams are known: a
    range that began inside a value would say things of bytes that are
    no frame."""
    said = []
    return said, lambda kind, offset, message: said.append(
        (kind, offset, message))


#: Warnings said in this process: (who, path, size, mtime, offset, text).
_SAID = set()
_TOPIC = "lct-warning"
_SUBSCRIBED = set()


def _say_once(event):
    key = tuple(event[k] for k in ("who", "path", "size", "mtime", "offset",
                                   "message"))
    if key in _SAID:
        return
    _SAID.add(key)
    _logger.warning("%s: %s: %s", event["who"], event["path"], event["message"],
                    extra={"path": event["path"], "offset": event["offset"]})


def _say(said, who, path):
    """Say a range's warnings once: here, or from a distributed worker to
    the client (its topic), which says them once."""
    if not said:
        return
    try:
        st = _os.stat(path)
        size, mtime = st.st_size, st.st_mtime_ns
    except OSError:
        size = mtime = None
    events = [{"who": who, "path": path, "size": size, "mtime": mtime,
               "offset": offset, "message": message}
              for _kind, offset, message in said]
    worker = None
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        pass
    for e in events:
        if worker is not None:
            worker.log_event(_TOPIC, e)
        else:
            _say_once(e)


def _listen():
    """On a distributed client, say what workers send, once each."""
    try:
        from distributed import default_client
        client = default_client()
    except (ImportError, ValueError):
        return
    if id(client) in _SUBSCRIBED:
        return
    _SUBSCRIBED.add(id(client))
    client.subscribe_topic(_TOPIC, lambda event: _say_once(event[1]))


def _seams(infos):
    """Whether every range's chain landed on the next range's start, and
    each range's first record number in the file."""
    ok, bases, base = True, [], 0
    for info in infos:
        bases.append(base)
        if info is None:  # the whole file in one piece
            continue
        base += info["records"]
        ok = ok and info["cross"] == info["next"]
    return ok, bases


def _add_file(df, path):
    import pandas as pd
    import numpy as np
    # one code for the one category: a list of len(df) paths, hashed,
    # was a sixth of a partition's time
    df.insert(0, "file", pd.Categorical.from_codes(
        np.zeros(len(df), dtype=np.int8), categories=[path]))
    return df


# MARK: the table


def _table_part(path, start, stop, columns, qualname, since, until):
    said, log = _held()
    raw = _table_raw(path, columns, qualname, since, until, 1, start, stop,
                     log)
    return (_frame(_table_from_raw(raw, columns), columns), raw.get("range"),
            said)


def _table_whole(path, columns, qualname, since, until):
    said, log = _held()
    raw = _table_raw(path, columns, qualname, since, until, 1, log=log)
    _say(said, "lct.dask.read_table", path)
    df = _frame(_table_from_raw(raw, columns), columns)
    df.attrs = {}
    return _add_file(df, path)


def _table_pick(part, seams, k, path, columns, qualname, since, until):
    df, _, said = part
    ok, bases = seams
    if ok:
        _say(said, "lct.dask.read_table", path)
    if not ok:  # read again whole by the first range; the rest empty
        if k > 0:
            return _add_file(df.iloc[0:0].copy(), path)
        said, log = _held()
        raw = _table_raw(path, columns, qualname, since, until, 1, log=log)
        _say(said, "lct.dask.read_table", path)
        df = _frame(_table_from_raw(raw, columns), columns)
    elif "idx" in df and bases[k]:
        df["idx"] = df["idx"] + bases[k]
    df.attrs = {}
    return _add_file(df, path)


def _meta(columns):
    import numpy as np
    import pandas as pd
    from dask.dataframe.utils import clear_known_categories
    types = {"idx": np.int64, "offset": np.int64, "t_mono": np.float64,
             "t_wall": np.float64, "args_bytes": np.int64, "args": object}
    data = {"file": pd.Categorical([])}
    for c in columns:
        data[c] = pd.Categorical([]) if c in ("qualname", "op") \
            else pd.Series([], dtype=types[c])
    return clear_known_categories(pd.DataFrame(data))


def _threads():
    """Worker threads the graph will likely run on: the default
    distributed client's, else the local scheduler's."""
    try:
        from distributed import default_client
        client = default_client()
    except (ImportError, ValueError):
        client = None
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # a client closing or gone: split as for many
            return 2
    dask, _ = _dask()
    if dask.config.get("scheduler", None) in ("sync", "synchronous",
                                              "single-threaded"):
        return 1
    # the local scheduler's pool: dask's own count of the CPUs it may use
    # (affinity, a cgroup's quota), not every CPU of the machine
    import dask.system
    return dask.config.get("num_workers", None) or dask.system.CPU_COUNT or 1


def _split_for(split_bytes, narrow, nfiles=1):
    """split_bytes as given, or for "auto" SPLIT_BYTES, except that a
    narrow read (rows much smaller than the trace) is split only as far
    as there are threads to read the ranges: with as many files as
    threads, not at all (each file is already a task for a thread), else
    a file into as many ranges as the threads one file has.  More ranges
    buy no parallelism, only tasks (about 2 ms each on a LocalCluster)
    and per-partition work (docs/scale.md measures it)."""
    if split_bytes != "auto":
        return lambda path: split_bytes
    if not narrow:
        return lambda path: SPLIT_BYTES
    threads = _threads()
    per = -(-threads // max(1, nfiles))  # threads a file has, rounded up

    def per_file(path):
        size = _os.path.getsize(path)
        if threads <= 1 or per <= 1:
            return None
        return max(SPLIT_BYTES, -(-size // per))
    return per_file


def _frame_of(files, split_bytes, whole, part, pick, args, meta, label):
    """The collection of _partitions.  When every file is read whole its
    partitions come from ``dd.from_map``, whose reads dask fuses with the
    blockwise steps after them (a groupby's chunk): a task a file, where
    ``from_delayed`` leaves two, and each is a trip to the scheduler
    (bench/README.md, "Where the two-worker time goes")."""
    _, dd = _dask()
    if all(len(_ranges(p, split_bytes(p))) == 1 for p in files) and \
            hasattr(dd, "from_map"):
        return dd.from_map(whole, files, args=args, meta=meta,
                           enforce_metadata=False, label=label)
    parts = _partitions(files, split_bytes, whole, part, pick, args)
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


def _partitions(files, split_bytes, whole, part, pick, args):
    """Each file's ranges read, their seams checked, the rows picked; a
    file in one range is one task."""
    dask, _ = _dask()
    out = []
    for path in files:
        ranges = _ranges(path, split_bytes(path))
        if len(ranges) == 1:
            out.append(dask.delayed(whole, pure=True)(path, *args))
            continue
        parts = [dask.delayed(part, pure=True)(path, a, b, *args)
                 for a, b in ranges]
        infos = [dask.delayed(lambda p: p[1], pure=True)(p) for p in parts]
        seams = dask.delayed(_seams, pure=True)(infos)
        out.extend(dask.delayed(pick, pure=True)(p, seams, k, path, *args)
                   for k, p in enumerate(parts))
    return out


def read_table(paths_or_glob, columns=None, qualname=None, since=None,
               until=None, split_bytes="auto"):
    """lct.read_pandas over many traces as one ``dask.dataframe``: a
    ``file`` column first (categorical), then ``columns`` (as read_table
    takes them; idx is the record number in its file).  One partition per
    file, and one per ``split_bytes`` of a larger file (None: never
    split).  "auto" splits at SPLIT_BYTES, but a read without ``args``
    (rows far smaller than the trace) splits a file into no more ranges
    than the client has worker threads: one thread reads each file
    whole."""
    files = paths(paths_or_glob)
    columns = _DEFAULT_COLUMNS if columns is None else \
        (columns,) if isinstance(columns, str) else tuple(columns)
    _listen()
    split = _split_for(split_bytes, "args" not in columns, len(files))
    return _frame_of(files, split, _table_whole, _table_part, _table_pick,
                     (columns, qualname, since, until), _meta(columns),
                     "lct-read-table")


# MARK: keys


def _keys_part(path, start, stop, read, write, all_calls, qualname, since,
               until):
    said, log = _held()
    raw = _keys_raw(path, read, write, all_calls, qualname, since, until,
                    start, stop, log)
    return _keys_frame(raw), raw.get("range"), said


def _keys_whole(path, read, write, all_calls, qualname, since, until):
    said, log = _held()
    df = _keys_frame(_keys_raw(path, read, write, all_calls, qualname,
                               since, until, log=log))
    _say(said, "lct.dask.keys", path)
    return _add_file(df, path)


def _keys_pick(part, seams, k, path, read, write, all_calls, qualname, since,
               until):
    df, _, said = part
    ok, bases = seams
    if ok:
        _say(said, "lct.dask.keys", path)
    if not ok:
        if k > 0:
            return _add_file(df.iloc[0:0].copy(), path)
        said, log = _held()
        df = _keys_frame(_keys_raw(path, read, write, all_calls, qualname,
                                   since, until, log=log))
        _say(said, "lct.dask.keys", path)
    elif bases[k]:
        df["idx"] = df["idx"] + bases[k]
    return _add_file(df, path)


def _keys_meta():
    import pandas as pd
    from dask.dataframe.utils import clear_known_categories
    data = {"file": pd.Categorical([])}
    for name, dtype in KEY_COLUMNS:
        data[name] = pd.Categorical([]) if dtype == "category" \
            else pd.Series([], dtype=dtype)
    return clear_known_categories(pd.DataFrame(data))


def keys(paths_or_glob, read=None, write=None, all_calls=False, qualname=None,
         since=None, until=None, split_bytes=SPLIT_BYTES):
    """lct.keys over many traces as one ``dask.dataframe``: ``file``, then
    lct.keys's columns with its types (idx is the record number in its
    file; op, chunk_hash, model_name and cache_salt categorical).
    Per-key aggregates are Dask's groupby on obj_id."""
    files = paths(paths_or_glob)
    _listen()
    return _frame_of(files, _split_for(split_bytes, False), _keys_whole,
                     _keys_part, _keys_pick,
                     (read, write, all_calls, qualname, since, until),
                     _keys_meta(), "lct-keys")


# MARK: per-file stats


def _file_stats(path):
    said, log = _held()
    try:
        raw = _table_raw(path, ("t_mono",), None, None, None, 1, log=log)
    except (OSError, ValueError) as e:  # refused: said in its row
        return {"file": path, "records": 0, "skipped": 0, "truncated": False,
                "shrank": False, "error": str(e)}
    _say(said, "lct.dask.stats", path)
    s = raw["stats"]
    return {"file": path, "records": int(s["records"]),
            "skipped": int(s["skipped"]), "truncated": bool(s["truncated"]),
            "shrank": bool(s["shrank"]), "error": None}


def stats(paths_or_glob):
    """What reading each trace finds, as a pandas DataFrame with one row
    per file: file, records, skipped, truncated, shrank, and error (why a
    file was refused, else None: read_table over it would raise).  Each
    file is read on the cluster (one task a file) and its warnings are
    said here, once, naming the file."""
    dask, _ = _dask()
    import pandas as pd
    files = paths(paths_or_glob)
    _listen()
    rows = dask.compute(*[dask.delayed(_file_stats, pure=True)(p)
                          for p in files])
    return pd.DataFrame(list(rows), columns=["file", "records", "skipped",
                                             "truncated", "shrank", "error"])
