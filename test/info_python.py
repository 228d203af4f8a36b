"""lct info's level_meta rows against Python's own str() of what msgspec
decodes: random headers (seeded) whose level_meta holds every kind of
msgpack value (ints to 2^64, floats from random bits and the powers of
two, strs of any code point, bin, nil, bools, timestamps, nested arrays
and maps whose keys are anything hashable, arrays as tuples), maps whose
keys Python merges (1, True, 1.0; 0 and -0.0; equal tuples; each NaN a
key of its own), and every power of two as a float.  Python's str() is
the reference, so a rule repr.c or pydict.c gets wrong shows as a line
that differs.  Top-level strs are wrapped in a list: at the top lct
escapes control bytes for the terminal, as every command does.

usage: info_python.py LCT    (Debian's /usr/bin/python3 with python3-msgpack)
"""
import datetime
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

import msgpack

lct = sys.argv[1]
rng = random.Random(20261208)
P = msgpack.Packer(use_bin_type=True, datetime=True)
UTC = datetime.timezone.utc
HEADER = [("type", "header"), ("magic", b"LMCT"), ("format_version", 1),
          ("level", "storage"), ("trace_schema_version", 2),
          ("t_mono_start", 0.0), ("t_wall_start", 1.0),
          ("sm_config_json", ""), ("sm_config_digest", "")]


def rfloat():
    if rng.random() < 0.4:
        bits = rng.getrandbits(64).to_bytes(8, "little")
        return struct.unpack("<d", bits)[0]
    return rng.choice([0.0, -0.0, 1e16, 1e15, 1e-5, 1e-4, 5e-324, 0.1,
                       2.0 ** -1022, 1.7976931348623157e308, 1 / 3, 1e22,
                       float("inf"), -float("inf")])


def rstr():
    out = []
    for _ in range(rng.randint(0, 6)):
        c = rng.choice([rng.randint(0x20, 0x7e), rng.randint(0, 0x1f),
                        rng.randint(0x80, 0x3000), rng.randint(0x3000, 0x10ffff)])
        out.append(chr(0x41 if 0xd800 <= c <= 0xdfff else c))
    return "".join(out)


def rval(depth=0, key=False):
    k = rng.random()
    if k < 0.2:
        return rng.randint(-2 ** 63, 2 ** 64 - 1)
    if k < 0.35:
        return rfloat()
    if k < 0.55:
        return rstr()
    if k < 0.62:
        return rng.choice([True, False, None])
    if k < 0.7:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 5)))
    if k < 0.75 and not key:
        return datetime.datetime.fromtimestamp(
            rng.randint(-10 ** 10, 10 ** 10), UTC).replace(
                microsecond=rng.randint(0, 999999))
    if depth > 2:
        return 1
    if key:
        return tuple(rval(depth + 1, True) for _ in range(rng.randint(0, 3)))
    if k < 0.88:
        return [rval(depth + 1) for _ in range(rng.randint(0, 4))]
    return {rval(depth + 1, True): rval(depth + 1) for _ in range(rng.randint(0, 3))}


def enc(o):
    """msgpack of o, a tuple as an array (msgspec's key tuples)."""
    if isinstance(o, tuple):
        return P.pack_array_header(len(o)) + b"".join(enc(x) for x in o)
    if isinstance(o, list):
        return P.pack_array_header(len(o)) + b"".join(enc(x) for x in o)
    if isinstance(o, dict):
        return P.pack_map_header(len(o)) + b"".join(
            enc(k) + enc(v) for k, v in o.items())
    return P.pack(o)


def header(meta_pairs):
    """A header frame whose level_meta is the map of meta_pairs (packed)."""
    body = P.pack_map_header(len(HEADER) + 1)
    body += b"".join(P.pack(k) + P.pack(v) for k, v in HEADER)
    body += P.pack("level_meta") + P.pack_map_header(len(meta_pairs))
    body += b"".join(P.pack(k) + v for k, v in meta_pairs)
    return struct.pack(">I", len(body)) + body


def rows(path):
    out = subprocess.run([lct, "info", path], capture_output=True,
                         check=True).stdout.decode("utf-8")
    return [line for line in out.splitlines() if line.startswith("  k")]


failures = []
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "t.lct")

    def compare(what, packed, values):
        with open(path, "wb") as f:
            f.write(header([(f"k{i}", p) for i, p in enumerate(packed)]))
        want = [f"  {f'k{i}:':<28}{v}" for i, v in enumerate(values)]
        got = rows(path)
        if got != want:
            failures.append(f"{what}:\n  want {want}\n  got  {got}")

    for n in range(300):
        values = [[rval()] for _ in range(3)]
        compare(f"header {n}", [enc(v) for v in values], values)
    pool = [0, 1, True, False, 1.0, 0.0, -0.0, 2, 2.0, -1, -1.0, "a", b"a",
            None, float("nan"), (1, 2), (1.0, 2), (True, 2.0), (), ("a",),
            datetime.datetime(2020, 1, 1, tzinfo=UTC), 2 ** 64 - 1,
            2.0 ** 64, 2 ** 53 + 1, 2.0 ** 53]
    for n in range(200):
        pairs = [(rng.choice(pool), rng.randint(0, 99))
                 for _ in range(rng.randint(1, 30))]
        packed = (P.pack_array_header(1) + P.pack_map_header(len(pairs)) +
                  b"".join(enc(k) + P.pack(v) for k, v in pairs))
        d = {}
        for k, v in pairs:
            if isinstance(k, float) and k != k:  # msgspec: a NaN object each
                k = struct.unpack("<d", struct.pack("<d", k))[0]
            d[k] = v
        compare(f"merged keys {n}", [packed], [[d]])
    doubles = [math.ldexp(1.0, e) for e in range(-1074, 1024)]
    compare("powers of two", [enc(doubles)], [doubles])

for f in failures[:5]:
    print("FAIL:", f)
print(f"lct info's level_meta against Python {sys.version.split()[0]}'s "
      f"str(): 501 headers, {len(failures)} differ")
sys.exit(1 if failures else 0)
