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

Needs ``dask[dataframe]`` (Debian: python3-dask; python3-distributed for
a cluster).
"""

from __future__ import annotations

import glob as _glob
import os as _os

from . import (_DEFAULT_COLUMNS, _frame, _keys_raw, _table_from_raw,
               _table_raw, _warn)

__all__ = ["read_table", "keys", "paths"]

#: A file is split when it is larger than this (bytes), by default.
SPLIT_BYTES = 256 * 1024 * 1024


def _dask():
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:
        raise ImportError("lct.dask needs dask: apt-get install python3-dask "
                          "(Debian), or pip install 'dask[dataframe]'") \
            from None
    return dask, dd


def paths(paths_or_glob):
    """The files a str (a path or a glob), or a list of them, names: each
    glob's matches sorted, in the order given."""
    items = [paths_or_glob] if isinstance(paths_or_glob, (str, bytes,
                                                          _os.PathLike)) \
        else list(paths_or_glob)
    out = []
    for p in items:
        p = _os.fsdecode(p)
        if _glob.has_magic(p):
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


def _say(said):
    for kind, offset, message in said:
        _warn(kind, offset, message)


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
    df.insert(0, "file", pd.Categorical([path] * len(df)))
    return df


# MARK: the table


def _table_part(path, start, stop, columns, qualname, since, until):
    said, log = _held()
    raw = _table_raw(path, columns, qualname, since, until, 1, start, stop,
                     log)
    return (_frame(_table_from_raw(raw, columns), columns), raw.get("range"),
            said)


def _table_pick(part, seams, k, path, columns, qualname, since, until):
    df, _, said = part
    ok, bases = seams
    if ok:
        _say(said)
    if not ok:  # read again whole by the first range; the rest empty
        if k > 0:
            return _add_file(df.iloc[0:0].copy(), path)
        raw = _table_raw(path, columns, qualname, since, until, 1)
        df = _frame(_table_from_raw(raw, columns), columns)
    elif "idx" in df and bases[k]:
        df["idx"] = df["idx"] + bases[k]
    df.attrs = {}
    return _add_file(df, path)


def _meta(columns):
    import numpy as np
    import pandas as pd
    from dask.dataframe.utils import clear_known_categories
    types = {"idx": np.uint64, "offset": np.uint64, "t_mono": np.float64,
             "t_wall": np.float64, "args_bytes": np.uint32, "args": object}
    data = {"file": pd.Categorical([])}
    for c in columns:
        data[c] = pd.Categorical([]) if c in ("qualname", "op") \
            else pd.Series([], dtype=types[c])
    return clear_known_categories(pd.DataFrame(data))


def _partitions(files, split_bytes, part, pick, args):
    """Each file's ranges read, their seams checked, the rows picked."""
    dask, _ = _dask()
    out = []
    for path in files:
        ranges = _ranges(path, split_bytes)
        parts = [dask.delayed(part, pure=True)(path, a, b, *args)
                 for a, b in ranges]
        infos = [dask.delayed(lambda p: p[1], pure=True)(p) for p in parts]
        seams = dask.delayed(_seams, pure=True)(infos)
        out.extend(dask.delayed(pick, pure=True)(p, seams, k, path, *args)
                   for k, p in enumerate(parts))
    return out


def read_table(paths_or_glob, columns=None, qualname=None, since=None,
               until=None, split_bytes=SPLIT_BYTES):
    """lct.read_pandas over many traces as one ``dask.dataframe``: a
    ``file`` column first (categorical), then ``columns`` (as read_table
    takes them; idx is the record number in its file).  One partition per
    file, and one per ``split_bytes`` of a larger file (None: never
    split)."""
    _, dd = _dask()
    files = paths(paths_or_glob)
    columns = tuple(_DEFAULT_COLUMNS if columns is None else columns)
    parts = _partitions(files, split_bytes, _table_part, _table_pick,
                        (columns, qualname, since, until))
    return dd.from_delayed(parts, meta=_meta(columns), verify_meta=False)


# MARK: keys


def _keys_frame(raw):
    """lct.keys's columns as a DataFrame built from the extension's
    buffers: numbers as they are, op, model_name and cache_salt
    categorical (a row holds a code, not a str: cheap to build and to send
    between workers), chunk_hash as bytes."""
    import numpy as np
    import pandas as pd
    n = len(raw["chunk_hash"])
    nums = np.frombuffer(raw["nums"], dtype=np.int64).reshape(n, 4)
    codes = np.frombuffer(raw["codes"], dtype=np.uint32).reshape(n, 3)

    def cat(col, names):
        c = codes[:, col].astype(np.int64)
        c[c >= len(names)] = -1  # None
        return pd.Categorical.from_codes(c, names)

    return pd.DataFrame({
        "idx": np.frombuffer(raw["idx"], dtype=np.uint64),
        "t_mono": np.frombuffer(raw["t_mono"], dtype=np.float64),
        "op": cat(0, raw["ops"]),
        "chunk_hash": pd.Series(raw["chunk_hash"], dtype=object),
        "model_name": cat(1, raw["models"]),
        "kv_rank": nums[:, 0].copy(),
        "object_group_id": nums[:, 1].copy(),
        "cache_salt": cat(2, raw["salts"]),
        "obj_id": nums[:, 2].view(np.uint64).copy(),
        "bytes": nums[:, 3].view(np.uint64).copy()})


def _keys_part(path, start, stop, read, write, all, qualname, since, until):
    said, log = _held()
    raw = _keys_raw(path, read, write, all, qualname, since, until, start,
                    stop, log)
    return _keys_frame(raw), raw.get("range"), said


def _keys_pick(part, seams, k, path, read, write, all, qualname, since,
               until):
    df, _, said = part
    ok, bases = seams
    if ok:
        _say(said)
    if not ok:
        if k > 0:
            return _add_file(df.iloc[0:0].copy(), path)
        df = _keys_frame(_keys_raw(path, read, write, all, qualname, since,
                                   until))
    elif bases[k]:
        df["idx"] = df["idx"] + bases[k]
    return _add_file(df, path)


def _keys_meta():
    import numpy as np
    import pandas as pd
    from dask.dataframe.utils import clear_known_categories
    return clear_known_categories(pd.DataFrame({
        "file": pd.Categorical([]),
        "idx": pd.Series([], dtype=np.uint64),
        "t_mono": pd.Series([], dtype=np.float64),
        "op": pd.Categorical([]),
        "chunk_hash": pd.Series([], dtype=object),
        "model_name": pd.Categorical([]),
        "kv_rank": pd.Series([], dtype=np.int64),
        "object_group_id": pd.Series([], dtype=np.int64),
        "cache_salt": pd.Categorical([]),
        "obj_id": pd.Series([], dtype=np.uint64),
        "bytes": pd.Series([], dtype=np.uint64)}))


def keys(paths_or_glob, read=None, write=None, all=False, qualname=None,
         since=None, until=None, split_bytes=SPLIT_BYTES):
    """lct.keys over many traces as one ``dask.dataframe``: ``file``, then
    idx (the record number in its file), t_mono, op, chunk_hash,
    model_name, kv_rank, object_group_id, cache_salt, obj_id, bytes (op,
    model_name and cache_salt categorical).  Per-key aggregates are
    Dask's groupby on obj_id."""
    _, dd = _dask()
    files = paths(paths_or_glob)
    parts = _partitions(files, split_bytes, _keys_part, _keys_pick,
                        (read, write, all, qualname, since, until))
    return dd.from_delayed(parts, meta=_keys_meta(), verify_meta=False)
