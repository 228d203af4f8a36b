#!/bin/sh
# Several traces on one timeline from the command line: dump's merged
# lines equal a stable sort by t_wall of every file's own lines (each
# naming its file), also when one file is damaged (its skip and its cut
# tail are said with its name and offset, exit 3); stat, keys, mrc and
# replay count every file's records; t_mono on the merged timeline is
# t_wall less the first record's; what needs one file is refused.
set -u
lct="$LCT_BUILDDIR/tools/lct"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "merge-cli: $*"; exit 1; }
py() { python3 -c "$@"; }

# Three servers' traces: the same generator clock, so their t_wall
# interleave and many are equal across files.
"$lct" gen -n 600 --seed 1 "$tmp/a.lct" || fail "gen a"
"$lct" gen -n 500 --seed 2 "$tmp/b.lct" || fail "gen b"
"$lct" gen -n 400 --seed 1 --docs 10 "$tmp/c.lct" || fail "gen c"
# c damaged: a frame in the middle made malformed, and its tail cut.
py 'import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
# the 100th frame after the header: walk the length prefixes
off = 4 + int.from_bytes(d[0:4], "big")
for _ in range(100):
    off += 4 + int.from_bytes(d[off:off + 4], "big")
d[off + 4] = 0xc1                  # the body now starts with a reserved byte
open(p, "wb").write(bytes(d[:len(d) - 50]))' "$tmp/c.lct"

check_dump() { # check_dump FLAGS...: merged dump against the oracle
    : >"$tmp/each"
    for f in a b c; do
        "$lct" dump -q "$@" "$tmp/$f.lct" >"$tmp/$f.jsonl"
        echo "$tmp/$f.lct $tmp/$f.jsonl" >>"$tmp/each"
    done
    "$lct" dump "$@" "$tmp/a.lct" "$tmp/b.lct" "$tmp/c.lct" \
        >"$tmp/merged.jsonl" 2>"$tmp/err"
    rc=$?
    [ $rc = 3 ] || fail "merged dump $*: exit $rc, want 3 (c is damaged)"
    py 'import json, sys
want = []
for line in open(sys.argv[1]):
    path, lines = line.split()
    for rec in map(json.loads, open(lines)):
        want.append(dict(file=path, **rec))
want.sort(key=lambda r: r["t_wall"])   # stable: file order, then record
got = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want), (len(got), len(want))
for i, (g, w) in enumerate(zip(got, want)):
    assert list(g)[0] == "file", g
    assert g == w, (i, g, w)
ties = sum(1 for x, y in zip(want, want[1:])
           if x["t_wall"] == y["t_wall"] and x["file"] != y["file"])
assert ties > 0, "no equal timestamps across files: the test proves less"
' "$tmp/each" "$tmp/merged.jsonl" || fail "merged dump $* is not the stable sort"
    grep -q "c.lct: skipping malformed record at offset" "$tmp/err" ||
        fail "the damaged file's skip is not said with its name"
    grep -q "c.lct: truncated frame" "$tmp/err" ||
        fail "the damaged file's cut tail is not said with its name"
}
check_dump
check_dump --stream
check_dump --fields t_wall,qualname --qualname '*submit_prefetch_task'

# stat, keys, mrc, replay: every file's records, one timeline.
total=$(for f in a b c; do "$lct" dump -q "$tmp/$f.lct"; done | wc -l)
"$lct" stat -q --json "$tmp/a.lct" "$tmp/b.lct" "$tmp/c.lct" >"$tmp/s.json"
[ $? = 3 ] || fail "merged stat should exit 3"
py 'import json, sys
s = json.load(open(sys.argv[1]))
assert s["records"] == int(sys.argv[2]), (s["records"], sys.argv[2])
assert s["skipped"] == 1 and s["truncated"], s' \
    "$tmp/s.json" "$total" || fail "merged stat total"
rows=0
for f in a b c; do
    n=$("$lct" keys -q --csv "$tmp/$f.lct" | tail -n +2 | wc -l)
    rows=$((rows + n))
done
got=$("$lct" keys -q --csv "$tmp/a.lct" "$tmp/b.lct" "$tmp/c.lct" |
      tail -n +2 | wc -l)
[ "$got" = "$rows" ] || fail "merged keys: $got rows, want $rows"
# keys' t_mono column on the merged timeline: from 0, never back
"$lct" keys -q --csv "$tmp/a.lct" "$tmp/b.lct" | py 'import csv, sys
t = [float(r["t_mono"]) for r in csv.DictReader(sys.stdin)]
assert t[0] >= 0 and t[0] < 0.01, t[0]
assert all(x <= y for x, y in zip(t, t[1:])), "t_mono steps back"' ||
    fail "merged t_mono"
"$lct" mrc -q --json "$tmp/a.lct" "$tmp/b.lct" >"$tmp/m.json" ||
    fail "merged mrc"
py 'import json, sys
m = json.load(open(sys.argv[1]))
refs = m["reads"] + m["writes"]
assert refs == int(sys.argv[2]), (refs, sys.argv[2])' "$tmp/m.json" \
    "$("$lct" keys -q --csv "$tmp/a.lct" "$tmp/b.lct" | tail -n +2 | wc -l)" ||
    fail "merged mrc counts other references than merged keys"
"$lct" replay -q --speed 0 --value-bytes 64 --backend null --json \
    "$tmp/a.lct" "$tmp/b.lct" "$tmp/c.lct" >"$tmp/r.json"
[ $? = 3 ] || fail "merged replay of a damaged file should exit 3"
py 'import json, sys
s = json.load(open(sys.argv[1]))
assert " + " in s["trace"], s["trace"]' "$tmp/r.json" ||
    fail "merged replay's summary does not name every trace"

# What needs one file is refused, naming the option.
for opt in "--range 1:5" "--at 100" "--csv" "--header" "-f"; do
    # shellcheck disable=SC2086
    "$lct" dump $opt "$tmp/a.lct" "$tmp/b.lct" >/dev/null 2>"$tmp/err"
    [ $? = 2 ] || fail "dump $opt with two files should be a usage error"
done
"$lct" stat --range 1:5 "$tmp/a.lct" "$tmp/b.lct" >/dev/null 2>&1
[ $? = 2 ] || fail "stat --range with two files should be a usage error"
"$lct" dump - - </dev/null >/dev/null 2>&1
[ $? = 2 ] || fail "standard input twice should be a usage error"
exit 0
