"""Test shim for lmcache.v1.mp_observability.trace.format: the Header and
Record structs decoded the way msgspec's typed decoder does (as
../shared/FORMAT.md states it), with python3-msgpack, so that the
reference reader (reader.py beside this file, LMCache's) runs here.
msgspec itself is not packaged for Debian; where this shim and msgspec
could differ is noted inline."""
import msgpack

MAGIC = b"LMCT"
FORMAT_VERSION = 1
TRACE_SCHEMA_VERSION = 2


class Ext:
    def __init__(self, code, data):
        self.code, self.data = code, data

    def __eq__(self, other):
        return (getattr(other, "code", None), getattr(other, "data", None)) \
            == (self.code, self.data)

    __hash__ = None  # msgspec's Ext defines no hash: never a dict key


class Header:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Record:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _ext(code, data):
    if code == -1:  # msgpack-python's timestamp=3 handles the ext itself
        raise ValueError("timestamp ext not decoded")
    return Ext(code, data)


def _listify(v):
    """msgpack gives tuples (use_list=False, so keys can be arrays):
    arrays are lists except as map keys, as msgspec gives them; strings
    must be valid UTF-8 (surrogateescape marks the bytes that are not)."""
    if isinstance(v, tuple):
        return [_listify(x) for x in v]
    if isinstance(v, dict):
        return {_key(k): _listify(x) for k, x in v.items()}
    if isinstance(v, str):
        v.encode("utf-8")  # raises on a lone surrogate: invalid UTF-8
    return v


def _key(k):
    if isinstance(k, tuple):
        return tuple(_key(x) for x in k)
    if isinstance(k, str):
        k.encode("utf-8")
    return k


def _decode_map(buf):
    obj = msgpack.unpackb(buf, raw=False, use_list=False,
                          strict_map_key=False, timestamp=3,
                          unicode_errors="surrogateescape", ext_hook=_ext)
    if not isinstance(obj, dict):
        raise ValueError(f"Expected `object`, got `{type(obj).__name__}`")
    for k in obj:
        if not isinstance(k, str):
            raise ValueError("Expected `str` keys")
    return obj


def _float(obj, name):
    v = obj[name]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"Expected `float` - at `$.{name}`")
    return float(v)


def _int(obj, name):
    v = obj[name]
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"Expected `int` - at `$.{name}`")
    return v


def _str(obj, name):
    v = obj[name]
    if not isinstance(v, str):
        raise ValueError(f"Expected `str` - at `$.{name}`")
    v.encode("utf-8")
    return v


def _required(obj, names, tag):
    if obj.get("type", tag) != tag:
        raise ValueError(f"Invalid value {obj['type']!r} - at `$.type`")
    for n in names:
        if n not in obj:
            raise ValueError(f"Object missing required field `{n}`")


def decode_header(buf):
    obj = _decode_map(buf)
    _required(obj, ("magic", "format_version", "level",
                    "trace_schema_version", "t_mono_start", "t_wall_start",
                    "sm_config_json", "sm_config_digest"), "header")
    if not isinstance(obj["magic"], bytes):
        raise ValueError("Expected `bytes` - at `$.magic`")
    meta = obj.get("level_meta")
    return Header(magic=obj["magic"], format_version=_int(obj, "format_version"),
                  level=_str(obj, "level"),
                  trace_schema_version=_int(obj, "trace_schema_version"),
                  t_mono_start=_float(obj, "t_mono_start"),
                  t_wall_start=_float(obj, "t_wall_start"),
                  sm_config_json=_str(obj, "sm_config_json"),
                  sm_config_digest=_str(obj, "sm_config_digest"),
                  level_meta=None if meta is None else _listify(meta))


def decode_record(buf):
    obj = _decode_map(buf)
    _required(obj, ("t_mono", "t_wall", "qualname", "args"), "record")
    args = obj["args"]
    if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
        raise ValueError("Expected `object` with `str` keys - at `$.args`")
    return Record(t_mono=_float(obj, "t_mono"), t_wall=_float(obj, "t_wall"),
                  qualname=_str(obj, "qualname"), args=_listify(args))

