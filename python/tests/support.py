"""What the Python tests share: where things are, a runner for
interpreters without pytest, and msgspec's JSON view of a value (how the
fixtures' expectations are written)."""
import base64
import contextlib
import datetime
import math
import os
import sys
import threading
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(TOP, "test", "fixtures")
LCT = os.environ.get("LCT_TOOL", os.path.join(TOP, "build", "tools", "lct"))


try:  # under pytest a Skip is its skip; as a plain script, ours
    import pytest

    class Skip(pytest.skip.Exception):
        """A test that cannot run here (a missing module); says why."""
except ImportError:
    class Skip(Exception):
        """A test that cannot run here (a missing module); says why."""


@contextlib.contextmanager
def piped(path):
    """A path naming a pipe that a thread fills with the file at path:
    what a reader of /dev/stdin sees.  The thread is joined after."""
    rfd, wfd = os.pipe()

    def feed():
        with open(path, "rb") as f, os.fdopen(wfd, "wb") as w:
            w.write(f.read())

    t = threading.Thread(target=feed)
    t.start()
    try:
        yield f"/proc/self/fd/{rfd}"
    finally:
        t.join()
        os.close(rfd)


def as_json(v):
    """The value as msgspec.json would print it, parsed back: bytes as
    base64, datetimes as RFC 3339 UTC, NaN and infinities as None, non-str
    map keys as their JSON text."""
    import lct
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, bytes):
        return base64.b64encode(v).decode()
    if isinstance(v, datetime.datetime):
        return v.isoformat().replace("+00:00", "Z")
    if isinstance(v, (list, tuple)):
        return [as_json(x) for x in v]
    if isinstance(v, dict):
        import json
        return {k if isinstance(k, str) else json.dumps(as_json(k)):
                as_json(x) for k, x in v.items()}
    if isinstance(v, lct.Ext):
        return {"ext": v.code, "data": base64.b64encode(v.data).decode()}
    raise TypeError(type(v))


def run(namespace):
    """Run every test_* function of a module; the exit status."""
    failed = skipped = passed = 0
    for name, fn in sorted(namespace.items()):
        if not name.startswith("test_") or not callable(fn):
            continue
        try:
            fn()
            passed += 1
            print(f"PASS {name}")
        except Skip as e:
            skipped += 1
            print(f"SKIP {name}: {e}")
        except Exception:
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed, {skipped} skipped "
          f"({sys.executable})")
    return 1 if failed else 0
