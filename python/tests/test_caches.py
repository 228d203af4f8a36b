"""A record reads the same whatever was read before it, in this process:
lct.TraceReader reads hostile records right after records that fill the
library's per-thread caches (key templates, layouts), in both orders,
from a file and from a pipe, and after another reader of another file;
every record must read as it does cold (in a fresh thread, whose caches
are empty) and, where python3-msgpack is there, as LMCache's reader.py
reads it.  Any interpreter: the traces are encoded here by hand."""
import os
import struct
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from support import as_json, piped, run  # noqa: E402

import lct  # noqa: E402

SM = "lmcache.v1.distributed.storage_manager.StorageManager."


# MARK: msgpack, as msgspec writes it (smallest encodings)

class Raw(bytes):
    """Bytes put in as they are (a hand-made fault)."""


def pack(v):
    if isinstance(v, Raw):
        return bytes(v)
    if isinstance(v, bool):
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 0x80:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack("b", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        return (bytes([0xa0 | len(b)]) if len(b) < 32
                else b"\xd9" + bytes([len(b)])) + b
    if isinstance(v, bytes):
        return b"\xc4" + bytes([len(v)]) + v
    if isinstance(v, Pairs):
        return bytes([0x80 | len(v)]) + b"".join(
            pack(k) + pack(x) for k, x in v)
    if isinstance(v, list):
        return bytes([0x90 | len(v)]) + b"".join(pack(x) for x in v)
    raise TypeError(type(v))


class Pairs(list):
    """A map as its (key, value) pairs: keys of any type, in order."""


def m(**kw):
    return Pairs(kw.items())


def frame(body):
    return struct.pack(">I", len(body)) + body


HEADER = frame(pack(m(type="header", magic=b"LMCT", format_version=1,
                      level="storage", trace_schema_version=2,
                      t_mono_start=0.0, t_wall_start=0.0, sm_config_json="",
                      sm_config_digest="")))


def record(qualname, args):
    return pack(m(type="record", t_mono=0.5, t_wall=1.5, qualname=qualname,
                  args=args))


# MARK: keys, fillers, hostile records

SHAPES = [  # model name, the pairs after kv_rank
    ("Qwen/Qwen3-8B", []),
    ("meta-llama/Llama-3.1-8B-Instruct", [("object_group_id", 2)]),
    ("meta-llama/Llama-3.1-8B-Instruct",
     [("object_group_id", 1), ("cache_salt", "salt")]),
]


def key(shape, rank, model=None):
    name, more = shape
    v = Pairs([("chunk_hash", bytes(range(32))), ("model_name", model or name),
               ("kv_rank", rank)] + more)
    return m(__t__="ObjectKey", v=v)


def layout(dim):
    return m(__t__="MemoryLayoutDesc",
             v=m(shapes=[[2, 256, 8, dim]], dtypes=["torch.bfloat16"]))


def fill_key_list(s):
    return record(SM + "reserve_write",
                  m(keys=[key(s, r) for r in range(3)], layout_desc=layout(128),
                    mode=m(__t__="PrefetchMode", v="LOOKUP")))


def fill_key_values(s):
    return record("f", m(key=key(s, 1), other=key(s, 2)))


def fill_spec(s):
    spec = m(keys=[key(s, 0), key(s, 1)], num_kv_readers=1,
             policy=m(__t__="TrimPolicy", v="PREFIX"),
             attn_desc=m(__t__="AttnWindowDesc",
                         v=m(num_chunks_in_sw=[4, 4], world_size=1)),
             group_layout_descs=m(**{"0": layout(128)}), generation=0)
    return record(SM + "submit_prefetch_task",
                  m(spec=m(__t__="PrefetchRequestSpec", v=spec)))


FILLERS = [fill_key_list, fill_key_values, fill_spec]


def hostile_key_as_args_key(s):
    return record("h", Pairs([("key", key(s, 1)), (key(s, 2), 1)]))


def hostile_key_as_third_args_key(s):
    return record("h", Pairs([("a", key(s, 1)), ("b", key(s, 2)),
                              (key(s, 3), key(s, 4))]))


def hostile_bad_model_utf8(s):
    model = Raw(pack(s[0])[:-1] + b"\xff")  # its last byte
    return record(SM + "reserve_write",
                  m(keys=[key(s, 0), key(s, 1), key(s, 2, model=model)]))


def hostile_reserved_byte(s):
    return record(SM + "reserve_write",
                  m(keys=[key(s, 0), key(s, 1), key(s, 2)]))[:-1] + b"\xc1"


def hostile_map_as_inner_key(s):
    """A dict key that is a dict: Python cannot hash it."""
    return record("h", m(keys=[key(s, 0)], m=Pairs([(key(s, 1), 1)])))


def hostile_key_run_into_inner_keys(s):
    """A run of keys from a map's value into the map's next key."""
    return record(SM + "reserve_write",
                  m(x=Pairs([("a", key(s, 1)), (key(s, 2), key(s, 3))])))


def hostile_ext_as_inner_key(s):
    """An opaque ext as a dict key: msgspec's Ext has no hash."""
    return record("h", m(keys=[key(s, 0)],
                         m=Pairs([(Raw(b"\xd4\x05\x00"), 1)])))


def valid_tuple_as_inner_key(s):
    return record("h", m(keys=[key(s, 0)], m=Pairs([([1, [2, "x"]], 1)])))


def valid_key_values(s):
    return record("h", m(a=key(s, 1), b=key(s, 2), c=3))


HOSTILES = [hostile_key_as_args_key, hostile_key_as_third_args_key,
            hostile_bad_model_utf8, hostile_reserved_byte,
            hostile_map_as_inner_key, hostile_ext_as_inner_key,
            hostile_key_run_into_inner_keys, valid_tuple_as_inner_key, valid_key_values, fill_key_list,
            fill_spec]


# MARK: reading

def read(path):
    """What lct.TraceReader gives: each record's JSON and keys, and the
    skips."""
    with lct.TraceReader(path) as r:
        out = [(x.qualname, as_json(x.args),
                [tuple(k) for k in x.object_keys()]) for x in r.records()]
        return out, r.stats()["skipped"]


def read_cold(path):
    """read() in a fresh thread, whose caches are empty."""
    got = []
    t = threading.Thread(target=lambda: got.append(read(path)))
    t.start()
    t.join()
    return got[0]


def reference_reader():
    try:
        import msgpack  # noqa: F401
    except ImportError:
        return None  # only the cold read judges
    sys.path.insert(0, os.path.join(HERE, "refshim"))
    import logging
    logging.getLogger("lmcache").disabled = True
    from lmcache.v1.mp_observability.trace.reader import TraceReader
    return TraceReader


def read_reference(reader_class, path):
    with reader_class(path) as r:
        return [(x.qualname, as_json(x.args)) for x in r.records()]


def write(d, name, *bodies):
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(HEADER + b"".join(frame(b) for b in bodies))
    return path


def test_hostile_records_after_fillers_read_as_cold():
    ref = reference_reader()
    pairs = 0
    with tempfile.TemporaryDirectory() as d:
        for s in SHAPES:
            for fill in FILLERS:
                for bad in HOSTILES:
                    a, b = fill(s), bad(s)
                    cold_a, skip_a = read_cold(write(d, "a.lct", a))
                    cold_b, skip_b = read_cold(write(d, "b.lct", b))
                    assert skip_a == 0, fill.__name__
                    for first, second in ((a, b), (b, a)):
                        path = write(d, "pair.lct", first, second)
                        want = (cold_a + cold_b if first is a
                                else cold_b + cold_a)
                        what = f"{s[0]}: {fill.__name__} / {bad.__name__}"
                        got, skipped = read(path)
                        assert got == want, what
                        assert skipped == skip_b, what
                        with piped(path) as p:
                            assert read(p) == (want, skip_b), what + " piped"
                        if ref:
                            assert read_reference(ref, path) == [
                                x[:2] for x in want], what + " reference"
                        pairs += 1
    assert pairs == len(SHAPES) * len(FILLERS) * len(HOSTILES) * 2


def test_a_file_reads_the_same_after_another_file():
    """The report's case: a bad file, then a file that fills the caches,
    then the bad file again, all on one thread."""
    s = SHAPES[0]
    with tempfile.TemporaryDirectory() as d:
        bad = write(d, "bad.lct", hostile_key_as_args_key(s),
                    hostile_key_as_third_args_key(s))
        first = read(bad)
        assert first == ([], 2)
        for fill in FILLERS:
            read(write(d, "fill.lct", fill(s), fill(s)))
            assert read(bad) == first, fill.__name__


if __name__ == "__main__":
    sys.exit(run(globals()))
