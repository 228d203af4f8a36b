"""Read LMCache trace files (.lct) with liblct.

A drop-in for LMCache's ``TraceReader``::

    import lct
    with lct.TraceReader("run.lct") as r:
        print(r.header.level)
        for rec in r.records():
            print(rec.t_mono, rec.qualname, rec.args)

and whole-file tables for numpy and pandas (``read_table``,
``read_pandas``), the key reference stream of ``lct keys`` (``keys``) and
the miss-ratio curve of ``lct mrc`` (``mrc``).  The same records, skips,
warnings and refusals as the reference reader; the file is mapped and
each record's ``args`` is decoded only when it is read.
"""

from __future__ import annotations

import datetime as _dt
import logging as _logging
import math as _math
import operator as _operator
import os as _os
from collections import namedtuple as _namedtuple

from . import _lct

__all__ = [
    "TraceReader", "Header", "Record", "ObjectKey", "LayoutDesc", "Ext",
    "read_table",
    "read_pandas", "keys", "mrc", "MAGIC", "FORMAT_VERSION",
]

#: Magic bytes of every trace, and the one framing version there is.
MAGIC = b"LMCT"
FORMAT_VERSION = 1

logger = _logging.getLogger("lct")

Record = _lct.Record

ObjectKey = _namedtuple(
    "ObjectKey", ["chunk_hash", "model_name", "kv_rank", "object_group_id",
                  "cache_salt", "obj_id", "bytes"])
ObjectKey.__doc__ = """An LMCache ObjectKey, read by liblct's typed accessors.

chunk_hash (bytes), model_name (str), kv_rank (int), object_group_id (int,
0 when absent), cache_salt (str, "" when absent), obj_id (the key's stable
64-bit id, as ``lct keys`` prints it) and bytes (the calling record's
layout bytes, 0 when unknown)."""

LayoutDesc = _namedtuple("LayoutDesc", ["shapes", "dtypes", "bytes"])
LayoutDesc.__doc__ = """A MemoryLayoutDesc, read by liblct's typed accessor.

shapes and dtypes as the trace holds them (codec wrappers included), and
bytes: what they describe (0 when a dtype is unknown)."""

try:  # the type msgspec itself gives an opaque ext, when it is there
    from msgspec.msgpack import Ext  # type: ignore
except ImportError:  # pragma: no cover - depends on the interpreter
    class Ext:
        """An ext value of a type msgpack does not define (not -1)."""

        __slots__ = ("code", "data")

        def __init__(self, code: int, data: bytes) -> None:
            self.code = code
            self.data = data

        def __repr__(self) -> str:
            return f"Ext({self.code!r}, {self.data!r})"

        def __eq__(self, other: object) -> bool:
            return (isinstance(other, Ext) and self.code == other.code
                    and self.data == other.data)

        def __hash__(self) -> int:
            return hash((self.code, self.data))

_lct._set_types(ObjectKey, Ext, LayoutDesc)


class Header:
    """The header of a trace, with the fields of LMCache's ``Header``."""

    __slots__ = ("magic", "format_version", "level", "trace_schema_version",
                 "t_mono_start", "t_wall_start", "sm_config_json",
                 "sm_config_digest", "level_meta")
    type = "header"

    def __init__(self, fields: dict) -> None:
        for name in self.__slots__:
            setattr(self, name, fields.get(name))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__
                          if n != "level_meta" or self.level_meta is not None)
        return f"Header({inner})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Header) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__)


def _warn(kind: int, offset: int, message: str) -> None:
    logger.warning("TraceReader: %s", message)


def _refusal(path: str, code: int, errno: int, message: str):
    """The exception the reference reader raises for a refused file: an
    OSError from open(), or a ValueError worded as it words it."""
    if code == _lct.ERR_SYS and errno:
        return OSError(errno, _os.strerror(errno), path)
    prefix = f"trace file '{path}'"
    if message.startswith(prefix):
        tail = message[len(prefix):]
        tail = tail[len(" is empty: "):] if tail.startswith(" is empty: ") \
            else tail[2:] if tail.startswith(": ") else tail
        # the frame layer's words carry no path in the reference
        if tail.startswith(("truncated frame", "unexpected EOF")):
            return ValueError(tail)
        return ValueError(f"trace file {path!r}: {tail}")
    return ValueError(message)


class TraceReader:
    """Reader for a binary trace file, as LMCache's ``TraceReader``::

        with TraceReader("/tmp/run.lct") as r:
            header = r.header
            for record in r.records():
                ...

    The file is mapped (a pipe or FIFO is read as a stream).  Opening
    reads the header strictly and raises for a file the reference reader
    refuses (ValueError, or OSError when it cannot be opened).  records()
    yields every record in file order; a malformed frame is skipped and a
    cut tail ends the records, each with a WARNING on the ``lct`` logger.
    A record stays valid after the loop moves on and after close(): a
    mapped record keeps the mapping alive, a streamed one holds a copy of
    its args bytes.  ``args`` is decoded on first access.
    """

    def __init__(self, path: str, *, max_frame: int = 0) -> None:
        self._path = path
        try:
            self._r = _lct.Reader(path, _warn, max_frame)
        except _lct.OpenError as e:
            raise _refusal(_os.fsdecode(path), *e.args[:3]) from None
        self._header = Header(self._r.header())

    def __enter__(self) -> "TraceReader":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def header(self) -> Header:
        """The file header, read when the reader was opened."""
        return self._header

    @property
    def path(self) -> str:
        """Path of the trace file."""
        return self._path

    def records(self):
        """Iterate every record in file order (see the class's docs)."""
        if self._r is None:
            raise RuntimeError("TraceReader is closed")
        return self._r

    def stats(self) -> dict:
        """liblct's counters: records, skipped, truncated, bytes read."""
        if self._r is None:
            raise RuntimeError("TraceReader is closed")
        return self._r.stats()

    def close(self) -> None:
        """Close the reader.  Idempotent."""
        if self._r is not None:
            self._r.close()
            self._r = None


# MARK: tables

def _numpy():
    try:
        import numpy
    except ImportError:
        raise ImportError("lct's tables need numpy: apt-get install "
                          "python3-numpy (Debian), or pip install numpy") \
            from None
    return numpy


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("lct.read_pandas needs pandas: apt-get install "
                          "python3-pandas (Debian), or pip install pandas") \
            from None
    return pandas


def _bounds(since, until):
    """(t_mono since, until, t_wall since, until): a number bounds t_mono;
    a datetime, or a UTC time text such as 2026-12-01T10:00:00Z, t_wall."""
    out = [None, None, None, None]
    for i, v in enumerate((since, until)):
        if v is None:
            continue
        if isinstance(v, str):
            v = _dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
        if isinstance(v, _dt.datetime):
            if v.tzinfo is None:
                raise ValueError("a datetime bound needs a timezone (UTC)")
            out[2 + i] = v.timestamp()
        else:
            out[i] = float(v)
            if _math.isnan(out[i]):
                raise ValueError(f"{('since', 'until')[i]} is NaN: a bound "
                                 "is a number of seconds or a datetime")
    return out


def _whole(name, v, lo, hi):
    """v as an int in [lo, hi], or a ValueError/TypeError naming it."""
    try:
        n = _operator.index(v)
    except TypeError:
        raise TypeError(f"{name} wants an int, got {type(v).__name__}") \
            from None
    if not lo <= n <= hi:
        raise ValueError(f"{name} is {lo} to {hi}, got {n}")
    return n


def _column_names(columns):
    """A column list; one name given as a str is that one column."""
    return (columns,) if isinstance(columns, str) else tuple(columns)


def _patterns(p):
    return None if p is None else [p] if isinstance(p, str) else list(p)


_COLUMNS = {"idx": 1, "offset": 2, "t_mono": 4, "t_wall": 8, "qualname": 16,
            "op": 16, "args_bytes": 32, "args": 64}
_DEFAULT_COLUMNS = ("idx", "offset", "t_mono", "t_wall", "qualname", "op",
                    "args_bytes")


def _short_names(np, codes, categories):
    ops = [q.rsplit(".", 1)[-1] for q in categories]
    op_categories = sorted(set(ops), key=ops.index)
    remap = np.array([op_categories.index(o) for o in ops] or [0],
                     dtype=np.int32)
    return remap[codes] if len(codes) else codes.copy(), op_categories


def read_table(path, columns=None, qualname=None, since=None, until=None,
               threads: int = 0) -> dict:
    """Columns of every selected record as numpy arrays.

    columns: any of idx (record number from 0, as lct dump counts), offset,
    t_mono, t_wall, qualname, op (the qualname after its last dot),
    args_bytes (the msgpack size of args), args (JSON text, one str per
    row: only when asked).  qualname and op are categorical: int32 codes,
    with the names in ``qualname_categories`` / ``op_categories``.
    qualname selects records by pattern (the exact name, a suffix after a
    dot, or a glob; a list: any); since/until bound t_mono (seconds) or
    t_wall (a datetime or a UTC time text).  The file is read once, on
    ``threads`` threads (0: every CPU), with the GIL released.  The dict
    also holds ``stats``: records, skipped, truncated, shrank.
    """
    columns = _DEFAULT_COLUMNS if columns is None else _column_names(columns)
    raw = _table_raw(path, columns, qualname, since, until, threads)
    return _table_from_raw(raw, columns)


def _table_raw(path, columns, qualname, since, until, threads=0, start=0,
               stop=0, log=None):
    """What the extension reads: the whole file, or (start or stop given)
    the byte range lct.dask reads, with its "range" facts."""
    threads = _whole("threads", threads, 0, 1024)
    want = 0
    for c in columns:
        if c not in _COLUMNS:
            raise ValueError(f"unknown column {c!r}: any of "
                             f"{', '.join(_COLUMNS)}")
        want |= _COLUMNS[c]
    s, u, ws, wu = _bounds(since, until)
    try:
        return _lct.read_table(_os.fspath(path), want, _patterns(qualname),
                               s, u, ws, wu, threads, log or _warn, start,
                               stop)
    except _lct.OpenError as e:
        raise _refusal(_os.fsdecode(path), *e.args[:3]) from None


def _table_from_raw(raw, columns):
    np = _numpy()
    out = {}
    types = {"idx": np.uint64, "offset": np.uint64, "t_mono": np.float64,
             "t_wall": np.float64, "args_bytes": np.uint32}
    for c in columns:
        if c in types:
            out[c] = np.frombuffer(raw[c], dtype=types[c])
        elif c == "qualname":
            out["qualname"] = np.frombuffer(raw["qualname_codes"],
                                            dtype=np.int32)
            out["qualname_categories"] = raw["qualname_categories"]
        elif c == "args":
            out["args"] = raw["args"]
    if "op" in columns:
        codes = np.frombuffer(raw["qualname_codes"], dtype=np.int32)
        out["op"], out["op_categories"] = _short_names(
            np, codes, raw["qualname_categories"])
    out["stats"] = raw["stats"]
    return out


def read_pandas(path, columns=None, qualname=None, since=None, until=None,
                threads: int = 0):
    """read_table as a pandas DataFrame: qualname and op categorical,
    args (when asked) as JSON text."""
    if columns is not None:
        columns = _column_names(columns)
    t = read_table(path, columns, qualname, since, until, threads)
    return _frame(t, columns)


def _frame(t, columns):
    """A read_table dict as a DataFrame (qualname and op categorical)."""
    pd = _pandas()
    data = {}
    for c in (_DEFAULT_COLUMNS + ("args",) if columns is None
              else tuple(columns)):
        if c not in t:
            continue
        if c in ("qualname", "op"):
            data[c] = pd.Categorical.from_codes(t[c], t[c + "_categories"])
        else:
            data[c] = t[c]
    df = pd.DataFrame(data)
    df.attrs["stats"] = t["stats"]
    return df


def keys(path, read=None, write=None, all: bool = False, qualname=None,
         since=None, until=None):
    """The key reference stream of ``lct keys``, as a numpy structured
    array: idx, t_mono, op ("read", "write", or with all=True another
    call's qualname), chunk_hash (bytes), model_name, kv_rank,
    object_group_id, cache_salt, obj_id (the key's stable 64-bit id) and
    bytes (the call's layout bytes, 0 unknown).  read / write: patterns of
    the calls that are reads and writes (default submit_prefetch_task and
    reserve_write); qualname, since, until select records as read_table.
    """
    return _keys_from_raw(_keys_raw(path, read, write, all, qualname, since,
                                    until))


def _keys_raw(path, read, write, all, qualname, since, until, start=0,
              stop=0, log=None):
    s, u, ws, wu = _bounds(since, until)
    try:
        return _lct.keys(_os.fspath(path), _patterns(read), _patterns(write),
                         bool(all), _patterns(qualname), s, u, ws, wu,
                         log or _warn, start, stop)
    except _lct.OpenError as e:
        raise _refusal(_os.fsdecode(path), *e.args[:3]) from None


def _keys_from_raw(raw):
    np = _numpy()
    n = len(raw["chunk_hash"])
    dtype = np.dtype([("idx", np.uint64), ("t_mono", np.float64),
                      ("op", object), ("chunk_hash", object),
                      ("model_name", object), ("kv_rank", np.int64),
                      ("object_group_id", np.int64), ("cache_salt", object),
                      ("obj_id", np.uint64), ("bytes", np.uint64)])
    out = np.empty(n, dtype=dtype)
    out["idx"] = np.frombuffer(raw["idx"], dtype=np.uint64)
    out["t_mono"] = np.frombuffer(raw["t_mono"], dtype=np.float64)
    nums = np.frombuffer(raw["nums"], dtype=np.int64).reshape(n, 4)
    codes = np.frombuffer(raw["codes"], dtype=np.uint32).reshape(n, 3)
    out["kv_rank"] = nums[:, 0]
    out["object_group_id"] = nums[:, 1]
    out["obj_id"] = nums[:, 2].view(np.uint64)
    out["bytes"] = nums[:, 3].view(np.uint64)
    for field, col, names in (("op", 0, raw["ops"]),
                              ("model_name", 1, raw["models"]),
                              ("cache_salt", 2, raw["salts"])):
        out[field] = np.array(names + [None], dtype=object)[codes[:, col]] \
            if n else out[field]
    out["chunk_hash"] = raw["chunk_hash"] if n else out["chunk_hash"]
    return out


def mrc(path, read=None, write=None, qualname=None, since=None, until=None,
        requests: str = "reads", sample=None, seed: int = 1, samples=None):
    """The LRU miss-ratio curve of ``lct mrc``, as a dict of numpy arrays.

    keys (capacities 1, 2, 3, 4, 6, 8, 11, ... x sqrt 2, to past the
    largest finite stack distance), bytes (keys x the mean key size),
    hit_ratio, miss_ratio, byte_hit_ratio (None when every key weighs the
    same), hit_ratio_min / hit_ratio_max (the band of the samples), and
    totals (one dict per sample).  requests="all" counts every reference
    as a request, as libCacheSim's cachesim does; sample=R uses SHARDS at
    rate R with ``samples`` samples (default 9) salted seed, seed+1, ...
    """
    np = _numpy()
    if requests not in ("reads", "all"):
        raise ValueError("requests is 'reads' or 'all'")
    if samples is not None:
        samples = _whole("samples", samples, 1, 64)
    seed = _whole("seed", seed, 0, 2**64 - 1)
    s, u, ws, wu = _bounds(since, until)
    try:
        raw = _lct.mrc(_os.fspath(path), _patterns(read), _patterns(write),
                       _patterns(qualname), s, u, ws, wu, requests == "all",
                       1.0 if sample is None else float(sample), seed,
                       samples or 0, _warn)
    except _lct.OpenError as e:
        raise _refusal(_os.fsdecode(path), *e.args[:3]) from None
    keys_ = np.array(raw["keys"], dtype=np.uint64)
    hit = np.array(raw["hit_ratio"], dtype=np.float64)
    out = {"keys": keys_, "hit_ratio": hit, "miss_ratio": 1 - hit,
           "bytes": keys_ * raw["mean_key_bytes"],
           "byte_hit_ratio": None if raw["byte_hit_ratio"] is None
           else np.array(raw["byte_hit_ratio"], dtype=np.float64),
           "hit_ratio_min": np.array(raw["hit_ratio_min"]),
           "hit_ratio_max": np.array(raw["hit_ratio_max"]),
           "totals": raw["totals"]}
    return out
