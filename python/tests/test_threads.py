"""The module's threading contract (docs/python.md): a TraceReader may be
shared by threads, which take turns on it (each record goes to exactly
one of them); close() from any thread, at any moment, ends every
iteration with RuntimeError("TraceReader is closed") and never frees
what a reading thread still uses; the whole-file functions may run from
any number of threads at once.  Each test here failed before that
contract held (a use-after-free under ASan, a silent short answer, a
SIGBUS past 256 readers, wrapped arguments), and the stress test runs
every public entry point from 8 threads on mapped and piped inputs with
closes and cut files interleaved.  scripts/test runs this under ASan and
UBSan too (libasan preloaded into Debian's /usr/bin/python3)."""
import logging
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import LCT, TOP, Skip, run  # noqa: E402

import lct  # noqa: E402

SAMPLE = os.path.join(TOP, "examples", "sample.lct")


def _has(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


class Warnings(logging.Handler):
    """Every WARNING the lct logger says, kept."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())

    def __enter__(self):
        logging.getLogger("lct").addHandler(self)
        return self

    def __exit__(self, *_):
        logging.getLogger("lct").removeHandler(self)


class Pipe:
    """A pipe a thread fills with a file's bytes, optionally pausing
    after `first` bytes until release() (so a reader blocks in read())."""

    def __init__(self, path, first=None):
        with open(path, "rb") as f:
            self.data = f.read()
        self.rfd, self.wfd = os.pipe()
        self.first = len(self.data) if first is None else first
        self.go = threading.Event()
        self.thread = threading.Thread(target=self._feed, daemon=True)
        self.thread.start()

    @property
    def path(self):
        return f"/proc/self/fd/{self.rfd}"

    def _feed(self):
        with os.fdopen(self.wfd, "wb") as w:
            try:
                w.write(self.data[:self.first])
                w.flush()
                if self.first < len(self.data):
                    self.go.wait(30)
                    w.write(self.data[self.first:])
            except (BrokenPipeError, OSError):
                pass

    def release(self):
        self.go.set()

    def close(self):
        """End the feeder: a write to a pipe nobody reads would block."""
        self.go.set()
        os.close(self.rfd)
        self.thread.join(30)


def offsets_of(path):
    with lct.TraceReader(path) as r:
        return [rec.offset for rec in r.records()]


def wait_until_blocked(thread, seconds=0.3):
    """Give a reading thread time to reach its blocking read()."""
    time.sleep(seconds)
    assert thread.is_alive()


def test_close_from_another_thread_while_one_waits_on_a_pipe():
    # The reading thread is inside lct_next, in read(), without the GIL;
    # close() comes; then the rest of the data.  Before: the reader was
    # freed under it (ASan: heap-use-after-free in read_some).
    pipe = Pipe(SAMPLE, first=100000)
    r = lct.TraceReader(pipe.path)
    got, ended = [], []

    def reading():
        try:
            for rec in r.records():
                got.append(rec.offset)
        except RuntimeError as e:
            ended.append(str(e))
        else:
            ended.append("end")

    t = threading.Thread(target=reading)
    t.start()
    wait_until_blocked(t)
    n_before = len(got)
    r.close()
    pipe.release()
    t.join(30)
    assert not t.is_alive(), "the reading thread is stuck"
    pipe.close()
    assert ended == ["TraceReader is closed"], ended
    # at most the record it was reading when close() came, then nothing
    assert n_before <= len(got) <= n_before + 1, (n_before, len(got))
    assert got == offsets_of(SAMPLE)[:len(got)]


def test_reopening_a_reader_another_thread_is_reading_is_refused():
    pipe = Pipe(SAMPLE, first=100000)
    raw = lct._lct.Reader(pipe.path, None, 0)
    done = []
    t = threading.Thread(target=lambda: done.append(sum(1 for _ in raw)))
    t.start()
    wait_until_blocked(t)
    try:
        raw.__init__(SAMPLE, None, 0)
    except RuntimeError as e:
        assert "in use by another thread" in str(e), str(e)
    else:
        raise AssertionError("__init__ on a reader in use was accepted")
    pipe.release()
    t.join(30)
    pipe.close()
    assert done == [3000], done  # the first file, whole


def test_two_threads_on_one_pipe_reader_share_its_records():
    # Before: 301 (once 749) of the records, false warnings, no error.
    want = offsets_of(SAMPLE)
    for _ in range(3):
        pipe = Pipe(SAMPLE)
        with Warnings() as w:
            r = lct.TraceReader(pipe.path)
            it = iter(r.records())
            parts = [[], []]

            def take(k):
                for rec in it:
                    parts[k].append(rec.offset)

            ts = [threading.Thread(target=take, args=(k,)) for k in (0, 1)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(60)
            r.close()
        pipe.close()
        assert w.messages == [], w.messages[:3]
        assert sorted(parts[0] + parts[1]) == want
        assert len(set(parts[0]) & set(parts[1])) == 0


def test_a_log_callback_that_reads_its_own_reader_is_refused():
    # A warning's callback runs inside next(): reading the same reader
    # from there is refused, as a generator refuses to re-enter.
    seen = []
    path = os.path.join(TOP, "test", "fixtures", "malformed_mixed.lct")

    def log(kind, offset, message):
        try:
            next(raw)
        except ValueError as e:
            seen.append(str(e))

    raw = lct._lct.Reader(path, log, 0)
    n = sum(1 for _ in raw)
    assert n > 0
    assert seen and all("already executing" in s for s in seen), seen


CHILD_MANY_READERS = r"""
import os, sys, lct
sample, big = sys.argv[1], sys.argv[2]
held = [lct.TraceReader(sample) for _ in range(600)]
last = lct.TraceReader(big)
os.truncate(big, 8192)
n = sum(1 for _ in last.records())
print(n, last.stats()["shrank"])
"""


def test_the_601st_mapped_reader_survives_a_cut_file():
    # Before: the guard had 256 slots; the 257th reader was unguarded and
    # a cut under it killed the interpreter with SIGBUS.
    if not os.path.exists(LCT):
        raise Skip(f"no lct tool at {LCT}")
    with tempfile.TemporaryDirectory() as d:
        big = os.path.join(d, "big.lct")
        subprocess.run([LCT, "gen", "-n", "20000", big], check=True)
        env = dict(os.environ, PYTHONPATH=os.path.dirname(lct.__path__[0]))
        p = subprocess.run([sys.executable, "-c", CHILD_MANY_READERS, SAMPLE,
                            big], env=env, capture_output=True, text=True,
                           timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    n, shrank = p.stdout.split()
    assert int(n) < 20000 and shrank == "True", p.stdout
    assert "shrank" in p.stderr, p.stderr[-500:]


def test_arguments_that_used_to_wrap_are_refused():
    if not _has("numpy"):
        raise Skip("numpy is not installed for this interpreter")
    for bad in (-1, 2**32, 2**64):
        try:
            lct.read_table(SAMPLE, threads=bad)
        except ValueError as e:
            assert "threads is 0 to 1024" in str(e), str(e)
        else:
            raise AssertionError(f"threads={bad} accepted")
    for kw in ({"since": math.nan}, {"until": float("nan")}):
        try:
            lct.read_table(SAMPLE, **kw)
        except ValueError as e:
            assert "NaN" in str(e), str(e)
        else:
            raise AssertionError(f"{kw} accepted")
    for bad in (0, 65, -1):
        try:
            lct.mrc(SAMPLE, samples=bad)
        except ValueError as e:
            assert "samples is 1 to 64" in str(e), str(e)
        else:
            raise AssertionError(f"samples={bad} accepted")
    t = lct.read_table(SAMPLE, columns="idx")
    assert set(t) == {"idx", "stats"} and len(t["idx"]) == 3000
    if _has("pandas"):
        df = lct.read_pandas(SAMPLE, columns="t_mono")
        assert list(df.columns) == ["t_mono"] and len(df) == 3000


# MARK: the stress test

def stress_answers():
    """What each entry point gives on the whole sample."""
    out = {"records": offsets_of(SAMPLE)}
    if _has("numpy"):
        out["table"] = len(lct.read_table(SAMPLE)["idx"])
        out["keys"] = len(lct.keys(SAMPLE))
        out["mrc"] = list(lct.mrc(SAMPLE)["hit_ratio"])
    return out


def test_every_entry_point_from_eight_threads_with_closes_and_cuts():
    want = stress_answers()
    full = want["records"]
    deadline = time.monotonic() + 25
    problems = []
    counts = {"right": 0, "refused": 0}
    lock = threading.Lock()
    d = tempfile.mkdtemp()
    shared = {"reader": lct.TraceReader(SAMPLE)}

    def cut_copy(k):
        path = os.path.join(d, f"cut{k}.lct")
        shutil.copyfile(SAMPLE, path)
        return path

    def note(ok, what):
        with lock:
            if ok:
                counts["right"] += 1
            else:
                problems.append(what)

    def one_step(rng, k, step):
        choice = rng.randrange(8)
        if choice == 0:  # a mapped reader of its own, read whole
            with lct.TraceReader(SAMPLE) as r:
                got = [rec.offset for rec in r.records()]
            note(got == full, f"own mapped reader: {len(got)} records")
        elif choice == 1:  # its own pipe reader
            pipe = Pipe(SAMPLE)
            try:
                with lct.TraceReader(pipe.path) as r:
                    got = [rec.offset for rec in r.records()]
            finally:
                pipe.close()
            note(got == full, f"own pipe reader: {len(got)} records")
        elif choice == 2:  # the shared reader: a share of its records
            r = shared["reader"]
            try:
                got = [rec.offset for rec in r.records()]
                note(set(got) <= set(full) and got == sorted(got),
                     "shared reader gave records not in order")
            except RuntimeError as e:
                note("closed" in str(e), f"shared reader: {e}")
        elif choice == 3:  # close the shared one, open a new one
            old = shared["reader"]
            shared["reader"] = lct.TraceReader(SAMPLE)
            old.close()
            note(True, "")
        elif choice == 4:  # a file cut while read
            path = cut_copy(f"{k}-{step}")
            r = lct.TraceReader(path)
            it = iter(r.records())
            first = [next(it).offset for _ in range(10)]
            os.truncate(path, rng.randrange(4096, 1_000_000))
            rest = [rec.offset for rec in it]
            r.close()
            got = first + rest
            note(got == full[:len(got)], "cut file gave other records")
            os.unlink(path)
        elif choice == 5 and "table" in want:
            n = len(lct.read_table(SAMPLE, threads=rng.randrange(0, 3))["idx"])
            note(n == want["table"], f"read_table: {n}")
        elif choice == 6 and "keys" in want:
            n = len(lct.keys(SAMPLE))
            note(n == want["keys"], f"keys: {n}")
        elif choice == 7 and "mrc" in want:
            h = list(lct.mrc(SAMPLE)["hit_ratio"])
            note(h == want["mrc"], "mrc: another curve")
        else:
            with lct.TraceReader(SAMPLE) as r:
                r.header, r.stats()
            note(True, "")

    def worker(k):
        rng = random.Random(k)
        step = 0
        while time.monotonic() < deadline and step < 400:
            step += 1
            try:
                one_step(rng, k, step)
            except (ValueError, RuntimeError, OSError) as e:
                with lock:  # a clear refusal is an answer
                    counts["refused"] += 1
                    if "closed" not in str(e) and "shrank" not in str(e):
                        problems.append(f"{type(e).__name__}: {e}")
            except Exception as e:  # anything else is a bug
                with lock:
                    problems.append(f"{type(e).__name__}: {e}")

    with Warnings():  # the cut files' warnings are expected
        threads = [threading.Thread(target=worker, args=(k,))
                   for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    shared["reader"].close()
    shutil.rmtree(d)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    assert problems == [], problems[:5]
    assert counts["right"] > 50, counts


if __name__ == "__main__":
    sys.exit(run(globals()))
