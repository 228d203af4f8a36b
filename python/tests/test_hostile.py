"""Hostile input through the Python module: every fuzz regression and
fixture through TraceReader (args, object_keys, repr of every record),
read_table (every column), keys and mrc; a file cut short under records
still alive; an endless pipe.  Nothing may crash, hang, or raise other
than the reader's own errors.  scripts/test also runs this under
AddressSanitizer and UBSan (a module built with them, libasan preloaded
into the interpreter)."""
import os
import resource
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import FIXTURES, LCT, TOP, Skip, run  # noqa: E402

import lct  # noqa: E402

# What a hostile file may make the module raise: the reader's refusal or
# a record's args that have no Python value (a map used as a map key).
EXPECTED = (ValueError, OSError, TypeError)


def corpus():
    dirs = [FIXTURES, os.path.join(TOP, "test", "fuzz", "regressions"),
            os.path.join(TOP, "build", "test", "fuzz", "smoke-corpus")]
    for d in dirs:
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                path = os.path.join(d, name)
                if os.path.isfile(path) and not name.endswith(".json"):
                    yield path


def read_all(path):
    try:
        r = lct.TraceReader(path)
    except EXPECTED:
        return 0
    n = 0
    with r:
        repr(r.header)
        for rec in r.records():
            n += 1
            for fn in (lambda: rec.args, rec.object_keys, lambda: repr(rec)):
                try:
                    fn()
                except EXPECTED:
                    pass
    return n


def test_every_regression_through_the_reader():
    n = files = 0
    for path in corpus():
        n += read_all(path)
        files += 1
    assert files > 400, files
    assert n > 300, n  # the fixtures and regressions hold 519


def test_every_regression_through_the_tables():
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise Skip("numpy is not installed for this interpreter")
    files = 0
    for path in corpus():
        files += 1
        for call in (
                lambda: lct.read_table(path, columns=list(lct._COLUMNS),
                                       threads=2),
                lambda: lct.keys(path, all=True),
                lambda: lct.mrc(path, sample=0.5, samples=2)):
            try:
                call()
            except EXPECTED:
                pass
    assert files > 400


def test_a_file_cut_under_live_records():
    if not os.path.exists(LCT):
        raise Skip(f"no lct tool at {LCT}")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.lct")
        subprocess.run([LCT, "gen", "-n", "20000", path], check=True)
        r = lct.TraceReader(path)
        it = iter(r.records())
        first = [next(it) for _ in range(10)]
        first[0].args  # read while whole
        os.truncate(path, 4096)
        rest = list(it)  # the reader stops where the bytes are gone
        assert len(rest) < 20000
        try:
            first[5].args
        except ValueError as e:
            assert "shrank" in str(e), str(e)
        stats = r.stats()
        r.close()
        assert stats["shrank"] or len(rest) < 5


def test_records_read_after_a_cut_say_shrank_every_round():
    """100 rounds: a file cut at a random place among records already
    yielded; each one's args, keys and layout read after the cut are its
    own when its bytes are still there, else the 'shrank' error, never
    a refusal of the zeros read in their place."""
    if not os.path.exists(LCT):
        raise Skip(f"no lct tool at {LCT}")
    import random
    import shutil
    rng = random.Random(52)
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, "base.lct")
        subprocess.run([LCT, "gen", "-n", "2000", base], check=True)
        with lct.TraceReader(base) as r:
            whole = [(x.args, x.object_keys()) for x, _ in
                     zip(r.records(), range(40))]
        path = os.path.join(d, "t.lct")
        for _ in range(100):
            shutil.copyfile(base, path)
            r = lct.TraceReader(path)
            it = iter(r.records())
            recs = [next(it) for _ in range(40)]
            os.truncate(path, rng.randrange(recs[1].offset,
                                            recs[-1].offset + 400))
            for i, rec in enumerate(recs):
                try:
                    got = (rec.args, rec.object_keys())
                    rec.layout()
                except ValueError as e:
                    assert "shrank" in str(e), str(e)
                else:
                    assert got == whole[i], f"record {i} read otherwise"
            r.close()


def test_an_endless_pipe_stays_bounded():
    # a header, then the same record frame forever
    with open(os.path.join(FIXTURES, "clean.lct"), "rb") as f:
        data = f.read()
    hlen = 4 + int.from_bytes(data[:4], "big")
    rlen = 4 + int.from_bytes(data[hlen:hlen + 4], "big")
    header, frame = data[:hlen], data[hlen:hlen + rlen]
    rfd, wfd = os.pipe()
    stop = threading.Event()

    def feed():
        with os.fdopen(wfd, "wb") as w:
            try:
                w.write(header)
                chunk = frame * 1000
                while not stop.is_set():
                    w.write(chunk)
            except (BrokenPipeError, OSError):
                pass

    t = threading.Thread(target=feed)
    t.start()
    r = lct.TraceReader(f"/proc/self/fd/{rfd}")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    n = 0
    for rec in r.records():
        n += 1
        if n == 200000:
            break
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    stop.set()
    r.close()
    os.close(rfd)
    t.join()
    assert n == 200000
    assert grown_kb < 64 * 1024, grown_kb  # the records were not kept


def test_endless_garbage_is_refused_at_once():
    rfd, wfd = os.pipe()
    stop = threading.Event()

    def feed():
        with os.fdopen(wfd, "wb") as w:
            try:
                while not stop.is_set():
                    w.write(b"y\n" * 65536)
            except (BrokenPipeError, OSError):
                pass

    t = threading.Thread(target=feed)
    t.start()
    try:
        lct.TraceReader(f"/proc/self/fd/{rfd}")
    except ValueError:
        pass
    else:
        raise AssertionError("garbage opened as a trace")
    finally:
        stop.set()
        os.close(rfd)
        t.join()


if __name__ == "__main__":
    sys.exit(run(globals()))
