"""lct.TraceReader as a drop-in for LMCache's TraceReader: every fixture's
expectation value for value (records, skips, the cut tail, refusals),
records that outlive the loop and the reader, pipes, and the logging.
Runs under pytest or as a plain script (python3 test_dropin.py)."""
import gc
import json
import logging
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import FIXTURES, LCT, Skip, as_json, piped, run  # noqa: E402

import lct  # noqa: E402


class Captured(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def capture():
    h = Captured()
    logging.getLogger("lct").addHandler(h)
    return h


def release(h):
    logging.getLogger("lct").removeHandler(h)


def fixture_names():
    return sorted(f[:-len(".expect.json")] for f in os.listdir(FIXTURES)
                  if f.endswith(".expect.json"))


def test_every_fixture_value_for_value():
    names = fixture_names()
    assert len(names) >= 14, names
    for name in names:
        path = os.path.join(FIXTURES, name + ".lct")
        with open(os.path.join(FIXTURES, name + ".expect.json")) as f:
            want = json.load(f)
        if want["open_error"]:
            e = refusal(path)
            assert isinstance(e, ValueError), (name, e)
            assert want["open_error"] in str(e), (name, str(e))
            continue
        h = capture()
        try:
            with lct.TraceReader(path) as r:
                header = {k: getattr(r.header, k) for k in want["header"]}
                assert as_json(header) == want["header"], name
                assert r.header.magic == b"LMCT"
                assert r.header.type == "header"
                if "level_meta" not in want["header"]:
                    assert r.header.level_meta is None, name
                got = [rec for rec in r.records()]
                stats = r.stats()
        finally:
            release(h)
        assert len(got) == len(want["records"]), name
        for rec, exp in zip(got, want["records"]):
            assert rec.type == "record"
            view = {"t_mono": rec.t_mono, "t_wall": rec.t_wall,
                    "qualname": rec.qualname, "args": rec.args}
            assert as_json(view) == exp, (name, rec.offset)
        assert stats["skipped"] == want["skipped"], name
        assert stats["truncated"] == want["truncated"], name
        skips = [m for m in h.messages if "skipping malformed" in m]
        cuts = [m for m in h.messages if "truncated frame" in m]
        assert len(skips) == want["skipped"], (name, h.messages)
        assert len(cuts) == (1 if want["truncated"] else 0), name
        assert all(m.startswith("TraceReader: ") for m in h.messages)


def refusal(path):
    """The exception opening path raises (failing when it opens)."""
    try:
        lct.TraceReader(path)
    except Exception as e:
        return e
    raise AssertionError(f"{path} opened, should be refused")


def test_refusals_are_the_reference_exceptions():
    cases = {
        "empty": "unexpected EOF reading frame length",
        "trunc_header_prefix": "truncated frame length prefix at offset 0",
        "trunc_header_body": "truncated frame body at offset 4 (got 36 of 285)",
    }
    for name, message in cases.items():
        e = refusal(os.path.join(FIXTURES, name + ".lct"))
        assert type(e) is ValueError and str(e) == message, (name, str(e))
    path = os.path.join(FIXTURES, "bad_magic.lct")
    e = refusal(path)
    assert type(e) is ValueError and str(e) == (
        f"trace file {path!r}: bad magic (got b'XXXX', expected b'LMCT')"), e
    path = os.path.join(FIXTURES, "format_v2.lct")
    e = refusal(path)
    assert type(e) is ValueError and str(e) == (
        f"trace file {path!r}: unsupported format_version 2 (this build "
        "expects 1)"), e
    e = refusal("/nonexistent/run.lct")
    assert isinstance(e, FileNotFoundError), e
    assert e.filename == "/nonexistent/run.lct"


def test_records_outlive_the_loop_and_the_reader():
    path = os.path.join(FIXTURES, "clean.lct")
    with lct.TraceReader(path) as r:
        kept = list(r.records())
        first_args = None
    # args never read before the reader closed: decoded from the mapping,
    # which the records keep alive
    gc.collect()
    with lct.TraceReader(path) as r2:
        again = list(r2.records())
        first_args = [x.args for x in again]
    assert [x.args for x in kept] == first_args
    assert kept == again
    r = lct.TraceReader(path)
    r.close()
    r.close()  # idempotent
    try:
        r.records()
    except RuntimeError as e:
        assert str(e) == "TraceReader is closed"
    else:
        raise AssertionError("records() of a closed reader")


def test_lazy_args_are_decoded_once():
    with lct.TraceReader(os.path.join(FIXTURES, "clean.lct")) as r:
        rec = next(iter(r.records()))
        a = rec.args
        assert rec.args is a
        assert repr(rec).startswith("Record(t_mono=")
        assert rec.op == rec.qualname.rsplit(".", 1)[-1]


def test_a_pipe_is_streamed_and_its_records_are_copies():
    path = os.path.join(FIXTURES, "malformed_mixed.lct")
    with lct.TraceReader(path) as r:
        want = [(x.t_mono, x.qualname, x.args) for x in r.records()]
    h = capture()
    try:
        with piped(path) as pipe:
            r = lct.TraceReader(pipe)
            got = list(r.records())  # args read after the stream moved on
            stats = r.stats()
            r.close()
    finally:
        release(h)
    assert [(x.t_mono, x.qualname, x.args) for x in got] == want
    assert stats["skipped"] == 5
    assert len(h.messages) == 5


def test_object_keys_from_the_typed_accessors():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.lct")
        if not os.path.exists(LCT):
            raise Skip(f"no lct tool at {LCT} to generate a trace")
        subprocess.run([LCT, "gen", "-n", "200", path], check=True)
        seen = 0
        with lct.TraceReader(path) as r:
            for rec in r.records():
                if rec.op != "reserve_write":
                    continue
                keys = rec.object_keys()
                wrapped = rec.args["keys"]
                if isinstance(wrapped, dict):  # a tuple's codec wrapper
                    wrapped = wrapped["v"]
                assert len(keys) == len(wrapped) > 0
                for k, w in zip(keys, wrapped):
                    assert isinstance(k, lct.ObjectKey)
                    assert k.chunk_hash == w["v"]["chunk_hash"]
                    assert k.model_name == w["v"]["model_name"]
                    assert k.kv_rank == w["v"]["kv_rank"]
                    assert k.bytes > 0
                layout = rec.layout()
                assert isinstance(layout, lct.LayoutDesc)
                assert layout.bytes == keys[0].bytes == 2 * 32 * 256 * 8 * 128 * 2
                assert layout.dtypes == ["torch.bfloat16"]
                seen += 1
        assert seen > 10
        # obj_id is the id lct keys prints
        out = subprocess.run([LCT, "keys", "--csv", path], check=True,
                             capture_output=True, text=True).stdout
        first_write = next(line for line in out.splitlines()
                           if ",write," in line)
        with lct.TraceReader(path) as r:
            assert next(x for x in r.records()
                        if x.op == "finish_write").layout() is None
        with lct.TraceReader(path) as r:
            rec = next(x for x in r.records() if x.op == "reserve_write")
            assert first_write.split(",")[8] == \
                f"{rec.object_keys()[0].obj_id:016x}"


if __name__ == "__main__":
    sys.exit(run(globals()))
