"""The loadable extension lct_sqlite in the two clients people use: the
sqlite3 shell (.load) and Python's standard sqlite3 module
(enable_load_extension), on every fixture, against what the reference
reader yields for it (the fixture's .expect.json): rows, times, args as
values, counts per qualname, the header, and refusals.

usage: sql_clients.py EXTENSION FIXTURES_DIR SAMPLE LCT
Also: lct_keys over the sample against `lct keys` (LCT, the tool).
Run by test/sql-clients.sh with Debian's /usr/bin/python3.
"""
import collections
import glob
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ext, fixtures, sample, tool = sys.argv[1:5]
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def python_client(conn, path, want):
    if want["open_error"]:
        try:
            conn.execute("SELECT * FROM lct_records(?)", (path,)).fetchall()
            expect(False, f"{path}: opened, the reference refuses it")
        except sqlite3.OperationalError as e:
            expect(path in str(e), f"{path}: message without the path: {e}")
        return
    rows = conn.execute("SELECT idx, t_mono, t_wall, qualname, args "
                        "FROM lct_records(?)", (path,)).fetchall()
    recs = want["records"]
    expect(len(rows) == len(recs), f"{path}: {len(rows)} rows, "
           f"{len(recs)} records")
    for n, (row, rec) in enumerate(zip(rows, recs)):
        idx, t_mono, t_wall, qualname, args = row
        expect(idx == n, f"{path} row {n}: idx {idx}")
        expect(t_mono == rec["t_mono"] and t_wall == rec["t_wall"],
               f"{path} row {n}: times")
        expect(qualname == rec["qualname"], f"{path} row {n}: qualname")
        expect(json.loads(args) == rec["args"], f"{path} row {n}: args")
    counts = dict(conn.execute("SELECT qualname, count(*) FROM "
                               "lct_records(?) GROUP BY qualname", (path,)))
    expect(counts == collections.Counter(r["qualname"] for r in recs),
           f"{path}: counts per qualname")
    h = want["header"]
    got = conn.execute("SELECT level, trace_schema_version, t_mono_start, "
                       "t_wall_start, sm_config_json, sm_config_digest, "
                       "level_meta FROM lct_header(?)", (path,)).fetchone()
    meta = json.loads(got[6]) if got[6] is not None else None
    expect(list(got[:6]) == [h["level"], h["trace_schema_version"],
                             h["t_mono_start"], h["t_wall_start"],
                             h["sm_config_json"], h["sm_config_digest"]]
           and meta == h.get("level_meta"), f"{path}: header {got}")


def shell_client(path, want):
    query = (f".load {ext}\n"
             f"SELECT qualname, count(*) AS n, max(t_mono) AS last "
             f"FROM lct_records('{path}') GROUP BY qualname;\n")
    run = subprocess.run(["sqlite3", "-bail", "-json", ":memory:"],
                         input=query, capture_output=True, text=True)
    if want["open_error"]:
        expect(run.returncode != 0 and path in run.stderr,
               f"sqlite3 shell, {path}: {run.returncode} {run.stderr!r}")
        return
    expect(run.returncode == 0, f"sqlite3 shell, {path}: {run.stderr!r}")
    got = json.loads(run.stdout) if run.stdout.strip() else []
    last = collections.defaultdict(lambda: -math.inf)
    count = collections.Counter()
    for r in want["records"]:
        count[r["qualname"]] += 1
        last[r["qualname"]] = max(last[r["qualname"]], r["t_mono"])
    expect({g["qualname"]: g["n"] for g in got} == count,
           f"sqlite3 shell, {path}: counts {got}")
    for g in got:  # the shell prints reals to 15 significant digits
        expect(math.isclose(g["last"], last[g["qualname"]], rel_tol=1e-14),
               f"sqlite3 shell, {path}: max(t_mono) {g}")


conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(ext)
paths = sorted(glob.glob(os.path.join(fixtures, "*.lct")))
expect(len(paths) >= 14, f"only {len(paths)} fixtures")
for path in paths:
    with open(path[:-4] + ".expect.json") as f:
        want = json.load(f)
    python_client(conn, path, want)
    shell_client(path, want)

# Loading the extension installs the SIGBUS guard: queries that read
# args may then take rows grouped from the mapped row cache, and a file
# cut in the middle of such a query ends its rows (an error naming the
# file, or fewer rows) instead of killing this process.
plan = " ".join(str(r) for r in conn.execute(
    "EXPLAIN QUERY PLAN SELECT args FROM lct_records(?) ORDER BY qualname",
    (sample,)))
expect("grouped by qualname" in plan, f"args grouped: {plan}")
with tempfile.TemporaryDirectory() as tmp:
    cut = os.path.join(tmp, "cut.lct")
    shutil.copyfile(sample, cut)
    total = conn.execute("SELECT count(*) FROM lct_records(?) WHERE idx >= 1",
                         (cut,)).fetchone()[0]
    conn.execute("SELECT count(*) FROM lct_records(?) WHERE idx >= 1",
                 (cut,)).fetchone()  # the second bounded query: row cache
    conn.create_function("cut_now", 0,
                         lambda: os.truncate(cut, 4096) or 1)
    try:
        rows = conn.execute("SELECT cut_now(), length(args) FROM "
                            "lct_records(?) WHERE idx >= 1", (cut,)).fetchall()
        expect(0 < len(rows) < total, f"cut file: {len(rows)} of {total} rows")
    except sqlite3.OperationalError as e:
        expect(cut in str(e), f"cut file: message without the path: {e}")

# The keys table is the stream lct keys prints, row for row.
rows = conn.execute("SELECT idx, op, obj_id, bytes FROM lct_keys(?)",
                    (sample,)).fetchall()
# The tool carries its own sanitizer runtime (clang links it in): the one
# preloaded for this interpreter's sake is not for it.
tool_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
printed = subprocess.run([tool, "keys", sample], env=tool_env,
                         capture_output=True,
                         text=True, check=True).stdout.splitlines()
want = [(k["idx"], k["op"], k["obj_id"], k["bytes"])
        for k in map(json.loads, printed)]
expect(len(rows) > 1000 and rows == want,
       f"lct_keys: {len(rows)} rows, lct keys printed {len(want)}")

# The extension's percentile() and median(), as aggregates and as window
# functions (SQLite's percentile extension: index (P + 1 - 1) x (n - 1) x
# 0.01, so the 7th of the 101 squares is exactly the 8th, 49).
squares = ("WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c "
           "WHERE i < 100) SELECT i * i AS x FROM c")
got = conn.execute(f"SELECT percentile(x, 7), median(x) FROM ({squares})"
                   ).fetchone()
expect(got == (49.0, 2500.0), f"percentile, median: {got}")
got = [r[0] for r in conn.execute(
    "SELECT median(x) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND "
    "CURRENT ROW) FROM (SELECT 1 AS i, 5 AS x UNION ALL SELECT 2, 1 UNION "
    "ALL SELECT 3, 9)")]
expect(got == [5.0, 3.0, 5.0], f"median as a window function: {got}")
try:
    conn.execute("SELECT median(1e999)").fetchall()
    expect(False, "median of an infinity: no error")
except sqlite3.OperationalError as e:
    expect("Inf input to percentile()" in str(e), f"median(Inf): {e}")

for f in failures:
    print("FAIL:", f)
print(f"{len(paths)} fixtures and the sample's keys through Python {sys.version.split()[0]} "
      f"(sqlite {sqlite3.sqlite_version}) and the sqlite3 shell: "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
