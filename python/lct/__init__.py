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

try:
    from . import _lct
except ImportError as _e:  # pragma: no cover - depends on the install
    if "_lct" not in str(_e) or "cannot open shared object" in str(_e):
        raise
    raise ImportError(
        "lct's compiled part (lct._lct) is not built here: install the "
        "package with `python3 -m pip install ./python` (in a venv for "
        "Debian's python3), or build it with `make python` and put "
        "build/python-build/lib on PYTHONPATH; importing from inside "
        "python/ finds the unbuilt sources first (docs/python.md)") from None

__all__ = [
    "TraceReader", "Header", "Record", "ObjectKey", "LayoutDesc", "Ext",
    "read_table", "read_pandas", "keys", "mrc", "sim", "MAGIC",
    "FORMAT_VERSION",
    "__version__",
]

#: liblct's version, the module's own.
__version__ = _lct.version()

#: Magic bytes of every trace, and the one framing version there is.
MAGIC = b"LMCT"
FORMAT_VERSION = 1

_logger = _logging.getLogger("lct")


def __dir__():
    return sorted(__all__ + ["dask"])

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

        # as msgspec's Ext: no hash, so an ext is never a dict's key
        __hash__ = None  # type: ignore[assignment]

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


def _log_for(who: str, path):
    """A warning sink that says who read which file: a WARNING on the lct
    logger, "WHO: PATH: MESSAGE" (the drop-in's words stay the reference
    reader's, "TraceReader: MESSAGE"), with path and offset as the
    LogRecord's attributes for handlers and filters."""
    name = _os.fsdecode(path) if path is not None else None

    def warn(kind: int, offset: int, message: str) -> None:
        extra = {"path": name, "offset": offset}
        if who == "TraceReader" or name is None:
            _logger.warning("%s: %s", who, message, extra=extra)
        else:
            _logger.warning("%s: %s: %s", who, name, message, extra=extra)
    return warn


_warn = _log_for("TraceReader", None)


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
            self._r = _lct.Reader(path, _log_for("TraceReader", path),
                                  max_frame)
        except _lct.OpenError as e:
            raise _refusal(_os.fsdecode(path), *e.args[:3]) from None
        self._header = Header(self._r.header())

    def __repr__(self) -> str:
        state = "closed" if self._r is None else "open"
        return f"<lct.TraceReader {_os.fsdecode(self._path)!r} {state}>"

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

def _missing(what, module, debian):
    """The ImportError for a module this interpreter cannot import: which
    interpreter it is, and the command that installs the module for it
    (Debian's package serves only Debian's own python3)."""
    import sys
    exe = sys.executable or "python3"
    version = "%d.%d.%d" % sys.version_info[:3]
    if _os.path.realpath(exe).startswith("/usr/bin/"):
        how = "apt-get install %s (or %s -m pip install %s)" % (
            debian, exe, module)
    else:
        how = "%s -m pip install %s (apt-get install %s serves Debian's " \
              "/usr/bin/python3, not this one)" % (exe, module, debian)
    return ImportError("%s %s, which this interpreter (%s, Python "
                       "%s) cannot import: %s" % (what, module, exe, version,
                                                  how))


def _numpy():
    try:
        import numpy
    except ImportError:
        raise _missing("lct's tables need", "numpy", "python3-numpy") \
            from None
    return numpy


def _pandas():
    try:
        import pandas
    except ImportError:
        raise _missing("lct.read_pandas needs", "pandas", "python3-pandas") \
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

#: Files this large or larger report progress (see read_table's progress).
PROGRESS_BYTES = 256 << 20


def _short_names(np, codes, categories):
    ops = [q.rsplit(".", 1)[-1] for q in categories]
    op_categories = sorted(set(ops), key=ops.index)
    remap = np.array([op_categories.index(o) for o in ops] or [0],
                     dtype=np.int32)
    return remap[codes] if len(codes) else codes.copy(), op_categories


class _Progress:
    """progress=True: tqdm's bar when tqdm is installed, else a line on
    stderr about every 2 seconds; a callable is called as
    progress(done_bytes, total_bytes).  Only for files of PROGRESS_BYTES
    or more: the read then runs on a thread of its own (the GIL released
    in C), adding the bytes it has read to a cell this thread looks at 4
    times a second."""

    def __init__(self, progress, path, what):
        self.call = None
        if not progress or path is None:
            return
        try:
            total = _os.path.getsize(path)
        except OSError:
            return
        if total < PROGRESS_BYTES:
            return
        self.total = total
        if callable(progress):
            self.call = progress
            return
        try:
            import tqdm  # type: ignore
            bar = tqdm.tqdm(total=total, unit="B", unit_scale=True,
                            desc=f"{what} {_os.fsdecode(path)}")

            def show(done, _total):
                bar.update(done - bar.n)
                if done >= total:
                    bar.close()
            self.call = show
        except ImportError:
            import sys
            import time
            last = [0.0]

            def line(done, t):
                now = time.monotonic()
                if done < t and now - last[0] < 2:
                    return
                last[0] = now
                sys.stderr.write(f"lct.{what}: {_os.fsdecode(path)}: "
                                 f"{done * 100 // t}% of {t / 2**20:.1f} "
                                 "MiB\n")
            self.call = line

    def run(self, fn):
        """fn(cell) on a thread, its bytes shown as they are read; its
        result or its exception."""
        if not self.call:
            return fn(None)
        import threading
        cell = bytearray(8)
        out = {}

        def work():
            try:
                out["value"] = fn(cell)
            except BaseException as e:  # handed to the caller
                out["error"] = e
        th = threading.Thread(target=work, daemon=True)
        self.call(0, self.total)
        th.start()
        while th.is_alive():
            th.join(0.25)
            done = min(int.from_bytes(cell, "little"), self.total)
            if th.is_alive():
                self.call(done, self.total)
        if "error" in out:
            raise out["error"]
        self.call(self.total, self.total)
        return out["value"]


def read_table(path, columns=None, qualname=None, since=None, until=None,
               threads: int = 0, *, datetimes: bool = False,
               progress=None) -> dict:
    """Columns of every selected record as numpy arrays.

    columns: any of idx (record number from 0, as lct dump counts), offset,
    t_mono, t_wall, qualname, op (the qualname after its last dot),
    args_bytes (the msgpack size of args), args (JSON text, one str per
    row: only when asked); one name as a str is that one column.  idx,
    offset and args_bytes are int64, t_mono float64, t_wall float64
    seconds (datetime64[ns] UTC with datetimes=True).  qualname and op are
    categorical: int32 codes, with the names in ``qualname_categories`` /
    ``op_categories``.  qualname selects records by pattern (the exact
    name, a suffix after a dot, or a glob; a list: any); since/until bound
    t_mono (seconds) or t_wall (a datetime or a UTC time text).  The file
    is read once, on ``threads`` threads (0: one per CPU the process may
    use), with the GIL released.  ``stats`` says what reading the file
    found: path, records, skipped, truncated, shrank.  Warnings go to the
    ``lct`` logger as "read_table: PATH: ...", with ``path`` and
    ``offset`` attributes.
    progress: True (tqdm, or a line on stderr) or a callable(done, total)
    for files of 256 MiB or more.
    """
    columns = _DEFAULT_COLUMNS if columns is None else _column_names(columns)
    raw = _Progress(progress, path, "read_table").run(
        lambda cell: _table_raw(path, columns, qualname, since, until,
                                threads, log=_log_for("read_table", path),
                                progress=cell))
    return _table_from_raw(raw, columns, datetimes, path)


def _table_raw(path, columns, qualname, since, until, threads=0, start=0,
               stop=0, log=None, progress=None):
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
                               s, u, ws, wu, threads,
                               log or _log_for("read_table", path), start,
                               stop, progress)
    except _lct.OpenError as e:
        raise _refusal(_os.fsdecode(path), *e.args[:3]) from None


def _stats(raw, path):
    stats = dict(raw["stats"])
    stats["path"] = _os.fsdecode(path)
    return stats


def _table_from_raw(raw, columns, datetimes=False, path=None):
    np = _numpy()
    out = {}
    # every count, index, offset and size is int64 (a difference of two
    # is then what it says, never 2**64 less), as the extension writes
    # them: the column is the memory it was built in
    types = {"idx": np.int64, "offset": np.int64, "t_mono": np.float64,
             "t_wall": np.float64, "args_bytes": np.int64}
    for c in columns:
        if c in types:
            out[c] = col = np.frombuffer(raw[c], dtype=types[c])
            if c == "t_wall" and datetimes:
                out[c] = _datetimes(np, col)
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
    out["stats"] = _stats(raw, path) if path is not None else raw["stats"]
    return out


def _datetimes(np, seconds):
    """Seconds since the epoch as datetime64[ns] (UTC), to the nanosecond
    a double holds; NaN and infinities as NaT."""
    ns = np.full(len(seconds), np.iinfo(np.int64).min, dtype=np.int64)
    ok = np.isfinite(seconds) & (np.abs(seconds) < 9.2e9)
    ns[ok] = np.round(seconds[ok] * 1e9).astype(np.int64)
    return ns.view("datetime64[ns]")


def read_pandas(path, columns=None, qualname=None, since=None, until=None,
                threads: int = 0, *, datetimes: bool = False, progress=None):
    """read_table as a pandas DataFrame: qualname and op categorical,
    args (when asked) as JSON text, t_wall as datetime64[ns, UTC] with
    datetimes=True.  ``df.attrs["stats"]`` says what reading found: path,
    records, skipped, truncated, shrank."""
    if columns is not None:
        columns = _column_names(columns)
    t = read_table(path, columns, qualname, since, until, threads,
                   datetimes=datetimes, progress=progress)
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
        elif c == "t_wall" and t[c].dtype.kind == "M":
            data[c] = pd.DatetimeIndex(t[c]).tz_localize("UTC")
        else:
            data[c] = t[c]
    df = pd.DataFrame(data)
    df.attrs["stats"] = t["stats"]
    return df


def _all_calls(all_calls, kw, who):
    """all_calls, or the older all= (it shadowed the builtin)."""
    if kw:
        if set(kw) != {"all"}:
            raise TypeError(f"{who}() got an unexpected keyword argument "
                            f"{sorted(set(kw) - {'all'})[0]!r}")
        import warnings
        warnings.warn(f"{who}(all=...) is now all_calls=...",
                      DeprecationWarning, stacklevel=3)
        return bool(kw["all"])
    return bool(all_calls)


def keys(path, read=None, write=None, all_calls: bool = False, qualname=None,
         since=None, until=None, *, progress=None, **kw):
    """The key reference stream of ``lct keys`` as a pandas DataFrame, one
    row per reference: idx (int64, the record number), t_mono, op ("read",
    "write", or with all_calls=True another call's qualname),
    chunk_hash (lowercase hex, as lct keys prints it), model_name,
    kv_rank, object_group_id, cache_salt, obj_id (the key's stable 64-bit
    id: uint64 here, the one unsigned column, since it is an id and not a
    quantity; text outputs print it as 16 hex digits, f"{obj_id:016x}"),
    bytes (int64, the call's layout bytes, 0 unknown).  op, chunk_hash,
    model_name and cache_salt are categorical: no column holds objects.
    read / write: patterns of the calls that are reads and writes
    (default submit_prefetch_task and reserve_write); qualname, since,
    until select records as read_table does.  ``df.attrs["stats"]``: path,
    records, skipped, truncated, shrank, references.
    """
    all_calls = _all_calls(all_calls, kw, "keys")
    raw = _Progress(progress, path, "keys").run(
        lambda cell: _keys_raw(path, read, write, all_calls, qualname, since,
                               until, progress=cell))
    df = _keys_frame(raw)
    df.attrs["stats"] = dict(_stats(raw, path), references=len(df))
    return df


def _keys_raw(path, read, write, all_calls, qualname, since, until, start=0,
              stop=0, log=None, progress=None):
    s, u, ws, wu = _bounds(since, until)
    try:
        return _lct.keys(_os.fspath(path), _patterns(read), _patterns(write),
                         bool(all_calls), _patterns(qualname), s, u, ws, wu,
                         log or _log_for("keys", path), start, stop,
                         progress)
    except _lct.OpenError as e:
        raise _refusal(_os.fsdecode(path), *e.args[:3]) from None


#: lct.keys's columns and their types, in order (lct.dask's meta too).
KEY_COLUMNS = (("idx", "int64"), ("t_mono", "float64"), ("op", "category"),
               ("chunk_hash", "category"), ("model_name", "category"),
               ("kv_rank", "int64"), ("object_group_id", "int64"),
               ("cache_salt", "category"), ("obj_id", "uint64"),
               ("bytes", "int64"))


def _keys_frame(raw):
    """lct.keys's DataFrame from the extension's columns, wrapped as they
    are: numbers, and names and hashes as categorical codes (cheap to
    build and to send between Dask workers)."""
    np = _numpy()
    pd = _pandas()
    (idx, t_mono, kv_rank, group, obj_id, nbytes,
     op, model, salt, chunk) = raw["columns"]

    def num(block, dtype):
        return np.frombuffer(block, dtype=dtype)

    def cat(block, names):
        return pd.Categorical.from_codes(np.frombuffer(block, dtype=np.int32),
                                         names)

    return pd.DataFrame({
        "idx": num(idx, np.int64), "t_mono": num(t_mono, np.float64),
        "op": cat(op, raw["ops"]), "chunk_hash": cat(chunk, raw["hashes"]),
        "model_name": cat(model, raw["models"]),
        "kv_rank": num(kv_rank, np.int64),
        "object_group_id": num(group, np.int64),
        "cache_salt": cat(salt, raw["salts"]),
        "obj_id": num(obj_id, np.uint64), "bytes": num(nbytes, np.int64)},
        copy=False)


def mrc(path, read=None, write=None, qualname=None, since=None, until=None,
        requests: str = "reads", sample=None, seed: int = 1, samples=None,
        *, prefix: bool = False, lookups_only: bool = False,
        chunk_size=None, policies=None):
    """The LRU miss-ratio curve of ``lct mrc`` as a pandas DataFrame, one
    row per capacity: keys (capacities 1, 2, 3, 4, 6, 8, 11, ... x sqrt 2,
    to past the largest finite stack distance; int64), bytes (keys x the
    mean key size; float64), hit_ratio, miss_ratio, byte_hit_ratio (NaN
    when every key weighs the same), hit_ratio_min and hit_ratio_max (the
    band of the samples; equal to hit_ratio for an exact curve).
    ``df.attrs["totals"]`` is one dict per sample (reads, writes,
    distinct_keys, compulsory_misses, infinite_hit_ratio, ...);
    ``df.attrs["requests"]`` and ``df.attrs["sample"]`` say how it was
    counted.  requests="all" counts every reference as a request, as
    libCacheSim's cachesim does; sample=R uses SHARDS at rate R with
    ``samples`` samples (default 9) salted seed, seed+1, ...

    prefix=True counts by the prefix rule, as LMCache's StorageManager
    does (``lct mrc --prefix``): a lookup's hits are its leading run of
    keys in the cache, and a ``token_hit_ratio`` column gives the share of
    chunk positions hit (a position: as many keys as the call has kv
    ranks) and ``byte_token_hit_ratio`` the same for an LRU of ``bytes``
    bytes (NaN when every key weighs the same); lookups_only=True takes
    the read calls' keys alone, as LMCache's cache simulator models its
    logs.  ``df.attrs`` then also
    holds ``chunk_size`` (chunk_size=, else the header's sm_config_json,
    else None) and ``tokens`` (positions x chunk_size).

    policies=["arc", "s3fifo", "belady", ...] adds a ``NAME_hit_ratio``
    column a policy (``lct mrc --policy``): its hit ratio at each capacity,
    simulated as libCacheSim's implementation of it behaves; lru's is the
    exact curve's, belady's the per-key ceiling.  With prefix=True they
    count by the prefix rule and a ``NAME_token_hit_ratio`` column comes
    too (Belady order is then no ceiling).  Known: fifo, lru, clock,
    sieve, lfu, arc, s3fifo, belady, mru, and LMCache's L1 policies
    lmcache-lru, lmcache-arc, lmcache-s3fifo.  Not with sample.
    """
    np = _numpy()
    pd = _pandas()
    if requests not in ("reads", "all"):
        raise ValueError("requests is 'reads' or 'all'")
    if samples is not None:
        samples = _whole("samples", samples, 1, 64)
    seed = _whole("seed", seed, 0, 2**64 - 1)
    s, u, ws, wu = _bounds(since, until)
    if (lookups_only or chunk_size is not None) and not prefix:
        raise ValueError("lookups_only and chunk_size go with prefix=True")
    if chunk_size is not None:
        chunk_size = _whole("chunk_size", chunk_size, 1, 2**62)
    try:
        raw = _lct.mrc(_os.fspath(path), _patterns(read), _patterns(write),
                       _patterns(qualname), s, u, ws, wu, requests == "all",
                       1.0 if sample is None else float(sample), seed,
                       samples or 0, _log_for("mrc", path), bool(prefix),
                       bool(lookups_only),
                       None if policies is None else list(policies))
    except _lct.OpenError as e:
        raise _refusal(_os.fsdecode(path), *e.args[:3]) from None
    keys_ = np.array(raw["keys"], dtype=np.int64)
    hit = np.array(raw["hit_ratio"], dtype=np.float64)
    byte_hit = np.full(len(hit), np.nan) if raw["byte_hit_ratio"] is None \
        else np.array(raw["byte_hit_ratio"], dtype=np.float64)
    df = pd.DataFrame({
        "keys": keys_, "bytes": keys_ * float(raw["mean_key_bytes"]),
        "hit_ratio": hit, "miss_ratio": 1 - hit, "byte_hit_ratio": byte_hit,
        "hit_ratio_min": np.array(raw["hit_ratio_min"], dtype=np.float64),
        "hit_ratio_max": np.array(raw["hit_ratio_max"], dtype=np.float64)})
    df.attrs.update(totals=raw["totals"], requests=requests,
                    sample=1.0 if sample is None else float(sample),
                    path=_os.fsdecode(path), prefix=bool(prefix))
    for name, ratios in (raw.get("policies") or {}).items():
        df[name + "_hit_ratio"] = np.array(ratios, dtype=np.float64)
    if prefix:
        df["token_hit_ratio"] = np.array(raw["token_hit_ratio"] or [],
                                         dtype=np.float64)
        df["byte_token_hit_ratio"] = \
            np.full(len(hit), np.nan) if raw["byte_token_hit_ratio"] is None \
            else np.array(raw["byte_token_hit_ratio"], dtype=np.float64)
        if chunk_size is None:
            chunk_size = _header_chunk_size(path)
        positions = raw["totals"][0]["positions"]
        df.attrs.update(chunk_size=chunk_size,
                        tokens=positions * chunk_size if chunk_size else None)
    return df


def _header_chunk_size(path):
    """The chunk size the trace's header states (sm_config_json's
    chunk_size), or None."""
    import json
    try:
        with TraceReader(path) as r:
            config = json.loads(r.header.sm_config_json or "{}")
    except (OSError, ValueError):
        return None
    n = config.get("chunk_size") if isinstance(config, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 \
        else None


def _capacity(name, v):
    """(value, in_bytes) from an int (keys) or a str as lct takes it:
    "1000", "1000keys", or bytes with B, K, M, G or T (powers of 1024),
    optionally followed by iB or B ("64G", "1.5TiB")."""
    import re
    if isinstance(v, bool):
        raise TypeError(f"{name} wants keys (an int) or a size text")
    if isinstance(v, int):
        if v < 1:
            raise ValueError(f"{name} is 1 key or more, got {v}")
        return v, False
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(keys|[BKMGT](?:iB|B)?)?",
                     str(v).strip())
    if not m or (m.group(2) or "").startswith("B") and m.group(2) not in (
            "B",):
        raise ValueError(f"{name} {v!r} is not a capacity: keys (1000, "
                         "1000keys) or bytes with B, K, M, G or T (64G)")
    unit = m.group(2) or "keys"
    if unit == "keys":
        if "." in m.group(1) or int(m.group(1)) < 1:
            raise ValueError(f"{name} {v!r}: a whole number of keys")
        return int(m.group(1)), False
    scaled = float(m.group(1)) * 1024 ** "BKMGT".index(unit[0])
    if scaled < 1:
        raise ValueError(f"{name} {v!r} is below one byte")
    return int(scaled), True


def _fraction(name, value):
    """A fraction in (0, 1], or 0 for None (the library's default)."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number in (0, 1]")
    if not 0 < value <= 1:
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return float(value)


def sim(path, capacity, *, read=None, write=None, qualname=None, since=None,
        until=None, lookups_only: bool = False, l1=None, chunk_size=None,
        points: int = 100, policy: str = "lru", per_key: bool = False,
        l1_policy: str = "lru", watermark=None, eviction_ratio=None,
        quotas=None):
    """LMCache's cache simulator at one capacity (``lct sim``), as a pandas
    DataFrame of its distributions, one row each (hit_prefix_chunks,
    request_chunks, chunk_reuse, span, lru_position: count, mean, max,
    p25 to p99, LMCache's percentiles), with the report in ``df.attrs``:
    requests, chunks and hit_chunks, tokens (chunks x chunk_size: the
    argument, else the header's sm_config_json, else None), hit_tokens,
    token_hit_rate, evictions, occupancy, the per-request hit rates, the
    cumulative hit rate at 10-100% of requests, ``series`` (a DataFrame of
    the cumulative rate over t_mono, ``points`` rows) and, with ``l1``,
    what an L1 of that capacity in front did (the cache simulated is then
    the L2 behind it).  capacity and l1: keys (an int, or "1000keys") or
    bytes ("64G", "1.5TiB").  policy= the cache's eviction policy (``lct
    sim --policy``: lru, fifo, clock, sieve, lfu, arc, s3fifo, mru, as
    libCacheSim has them; lmcache-lru, lmcache-arc, lmcache-s3fifo, as
    LMCache's L1 runs them; not belady, which needs the trace's future);
    per_key=True counts every chunk of a lookup found, not only its
    leading run; l1_policy= the L1's own policy.  watermark= and
    eviction_ratio= (in (0, 1]; default 0.8 and 0.2) set the pressure
    LMCache's L1 policies evict at; attrs["refused"] counts the keys they
    could not store for want of room.  quotas= with policy
    "lmcache-isolated-lru" (LMCache's IsolatedLRU, as its L2 adapters run
    it): a dict of cache_salt ("" for keys without one) to its quota, in
    the capacity's unit (``lct sim --quota``); a salt without one keeps
    nothing past a call.
    """
    pd = _pandas()
    cap, in_bytes = _capacity("capacity", capacity)
    l1_cap, l1_bytes = (0, False) if l1 is None else _capacity("l1", l1)
    points = _whole("points", points, 1, 100000)
    s, u, ws, wu = _bounds(since, until)
    if chunk_size is None:
        chunk_size = _header_chunk_size(path)
    else:
        chunk_size = _whole("chunk_size", chunk_size, 1, 2**62)
    quota_list = []
    for salt, q in (quotas or {}).items():
        if not isinstance(salt, str):
            raise TypeError(f"quotas: a cache_salt is a str, got {salt!r}")
        limit, q_bytes = _capacity(f"quotas[{salt!r}]", q)
        if q_bytes != in_bytes:
            raise ValueError("quotas are in " +
                             ("bytes" if in_bytes else "keys") +
                             ", as the capacity is")
        quota_list.append((salt, limit))
    try:
        raw = _lct.sim(_os.fspath(path), cap, in_bytes, _patterns(read),
                       _patterns(write), _patterns(qualname), s, u, ws, wu,
                       bool(lookups_only), l1_cap, l1_bytes, points,
                       _log_for("sim", path), chunk_size or 0, str(policy),
                       bool(per_key), str(l1_policy),
                       _fraction("watermark", watermark),
                       _fraction("eviction_ratio", eviction_ratio),
                       quota_list)
    except _lct.OpenError as e:
        raise _refusal(_os.fsdecode(path), *e.args[:3]) from None
    dists = raw.pop("distributions")
    df = pd.DataFrame.from_dict(
        {k: {c: v[c] for c in ("count", "mean", "max", "p25", "p50", "p75",
                               "p90", "p99")} for k, v in dists.items()},
        orient="index")
    df.index.name = "distribution"
    series = pd.DataFrame(raw.pop("series"))
    tokens, hit = raw.pop("tokens_counted"), raw.pop("hit_tokens_counted")
    raw["token_hit_rate"] = hit / tokens if tokens else 0.0
    raw["chunk_size"] = chunk_size
    raw["tokens"] = tokens if chunk_size else None
    raw["hit_tokens"] = hit if chunk_size else None
    if "l1" in raw:
        front = raw["l1"]
        raw["both_token_hit_rate"] = (
            (front["hit_chunks"] + raw["hit_chunks"]) / front["chunks"]
            if front["chunks"] else 0.0)
    df.attrs.update(raw, series=series, path=_os.fsdecode(path),
                    log2_bins={k: v["log2_bins"] for k, v in dists.items()})
    return df

