"""lct.TraceReader against the reference reader itself (LMCache's
reader.py, run through tests/refshim with python3-msgpack standing in
for msgspec) on generated traces with random damage: the same header,
the same records value for value, the same number of skips and cut
tails, the same refusals.  Debian's python3 with python3-msgpack."""
import logging
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from support import LCT, Skip, as_json, run  # noqa: E402

import lct  # noqa: E402


class Counter(logging.Handler):
    def __init__(self):
        super().__init__()
        self.skips = self.cuts = 0

    def emit(self, record):
        m = record.getMessage()
        self.skips += "skipping malformed" in m
        self.cuts += "truncated frame" in m


def reference():
    try:
        import msgpack  # noqa: F401
    except ImportError:
        raise Skip("python3-msgpack is not installed for this interpreter")
    sys.path.insert(0, os.path.join(HERE, "refshim"))
    from lmcache.v1.mp_observability.trace.reader import TraceReader
    return TraceReader


def read(reader_class, path, logger_name):
    """(header fields, records, skips, cuts) or the refusal."""
    h = Counter()
    log = logging.getLogger(logger_name)
    log.addHandler(h)
    log.propagate = False
    try:
        with reader_class(path) as r:
            hd = r.header
            header = {k: getattr(hd, k) for k in
                      ("magic", "format_version", "level",
                       "trace_schema_version", "t_mono_start",
                       "t_wall_start", "sm_config_json", "sm_config_digest")}
            records = [as_json({"t_mono": x.t_mono, "t_wall": x.t_wall,
                                "qualname": x.qualname, "args": x.args})
                       for x in r.records()]
        return as_json(header), records, h.skips, h.cuts
    except (ValueError, TypeError) as e:
        return ("refused", type(e).__name__)
    finally:
        log.removeHandler(h)


def damage(data, rng):
    """One to three of: a byte changed in a record, a length prefix
    changed, a run of zeros, garbage frames inserted, the tail cut."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(5)
        at = rng.randrange(300, len(data))
        if kind == 0:
            data[at] = rng.randrange(256)
        elif kind == 1:  # a length prefix: find one by walking frames
            pos, frames = 0, []
            while pos + 4 <= len(data):
                frames.append(pos)
                pos += 4 + int.from_bytes(data[pos:pos + 4], "big")
            pos = rng.choice(frames[1:] or frames)
            data[pos + rng.randrange(4)] = rng.randrange(256)
        elif kind == 2:
            n = rng.randint(1, 64)
            data[at:at + n] = bytes(n)
        elif kind == 3:
            body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
            pos = 0
            while pos + 4 <= len(data) and pos < at:
                pos += 4 + int.from_bytes(data[pos:pos + 4], "big")
            data[pos:pos] = len(body).to_bytes(4, "big") + body
        else:
            del data[at:]
    return bytes(data)


def test_damaged_traces_read_as_the_reference_reads_them():
    ref = reference()
    if not os.path.exists(LCT):
        raise Skip(f"no lct tool at {LCT}")
    rng = random.Random(20261203)
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, "base.lct")
        subprocess.run([LCT, "gen", "-n", "300", base], check=True)
        with open(base, "rb") as f:
            clean = f.read()
        compared = skipped = cut = 0
        for case in range(120):
            path = os.path.join(d, f"case{case}.lct")
            with open(path, "wb") as f:
                f.write(damage(clean, rng) if case else clean)
            want = read(ref, path, "lmcache.v1.mp_observability.trace.reader")
            got = read(lct.TraceReader, path, "lct")
            if want[0] == "refused":
                assert got[0] == "refused", (case, got[2:])
                continue
            assert got[0] == want[0], case
            assert len(got[1]) == len(want[1]), (case, len(got[1]),
                                                 len(want[1]))
            for i, (g, w) in enumerate(zip(got[1], want[1])):
                assert g == w, (case, i)
            assert got[2:] == want[2:], (case, got[2:], want[2:])
            compared += 1
            skipped += want[2] > 0
            cut += want[3] > 0
        # the damage did reach both kinds of warning
        assert compared > 80 and skipped > 20 and cut > 20, \
            (compared, skipped, cut)


if __name__ == "__main__":
    sys.exit(run(globals()))
