#!/bin/sh
# lct replay as a program: mem:N's hit ratio equals lct mrc --requests
# all's at N keys; LMCache's report files (CSV header byte for byte, the
# summary's keys) and JSONL lines; Ctrl-C stops, drains and still writes
# the reports, marked partial; a damaged trace replays what the reader
# yields and exits 3; --compare; usage errors; an L1 of another policy.
set -u
lct="$LCT_BUILDDIR/tools/lct"
sample="$LCT_SRCDIR/examples/sample.lct"
fixtures="$LCT_SRCDIR/test/fixtures"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "replay-cli: $*"; exit 1; }
py() { python3 -c "$@"; }

# 1. mem:N against lct mrc --requests all, at every capacity mrc shows.
"$lct" mrc -q --requests all --json "$sample" >"$tmp/mrc.json" || fail "mrc"
py 'import json, sys
for p in json.load(open(sys.argv[1]))["curve"]:
    print(p["keys"], repr(p["hit_ratio"]))' "$tmp/mrc.json" >"$tmp/points"
[ "$(wc -l <"$tmp/points")" -ge 5 ] || fail "too few curve points"
while read -r keys want; do
    "$lct" replay -q --speed 0 --backend "mem:$keys" --value-bytes 64 \
        --store-at reserve --fill-on-miss --json "$sample" >"$tmp/r.json" ||
        fail "replay mem:$keys"
    py 'import json, sys
got = json.load(open(sys.argv[1]))["reference_hit_ratio"]
want = float(sys.argv[2])
sys.exit(0 if abs(got - want) < 1e-12 else
         "mem:%s hit ratio %r, lct mrc %r" % (sys.argv[3], got, want))' \
        "$tmp/r.json" "$want" "$keys" || fail "hit ratios differ"
done <"$tmp/points"

# 2. LMCache's files and lines.
"$lct" replay -q --speed 0 --value-bytes 1K --backend mem:100000 \
    --output-dir "$tmp/out" --jsonl-out "$tmp/ops.jsonl" "$sample" \
    >/dev/null || fail "replay with reports"
printf 'qualname,count,errors,mean_ms,p50_ms,p90_ms,p99_ms,min_ms,max_ms\r\n' >"$tmp/want"
head -n 1 "$tmp/out/trace_replay_ops.csv" | cmp -s - "$tmp/want" ||
    fail "ops CSV header differs from LMCache's"
[ "$(cut -d, -f1 "$tmp/out/trace_replay_ops.csv" | tr -d '\r' | tr '\n' ' ')" = \
  "qualname load lookup store " ] || fail "ops CSV rows not load, lookup, store"
py 'import json, sys
s = json.load(open(sys.argv[1]))
assert isinstance(s["duration_s"], float), s
assert 0 < s["planning_s"] <= s["duration_s"], s
for k in ("load", "lookup", "store"):
    o = s["ops"][k]
    assert set(o) == {"count", "errors", "mean_ms", "p50_ms", "p90_ms",
                      "p99_ms", "min_ms", "max_ms"}, o
    assert o["min_ms"] <= o["p50_ms"] <= o["p90_ms"] <= o["p99_ms"] <= o["max_ms"], o
text = open(sys.argv[1]).read()
assert text == json.dumps(s, indent=2, sort_keys=True) + "\n", "not json.dump(indent=2, sort_keys=True)"
n = 0
for line in open(sys.argv[2]):
    d = json.loads(line)
    assert list(d)[:3] == ["qualname", "latency_ms", "failed"], d
    n += 1
assert n == sum(s["ops"][k]["count"] + s["ops"][k]["errors"] for k in s["ops"]), n
' "$tmp/out/trace_replay_summary.json" "$tmp/ops.jsonl" ||
    fail "summary JSON or JSONL not LMCache's shape"

# 3. Ctrl-C: stops issuing, drains, writes the reports marked partial.
"$lct" replay -q --speed 1 --value-bytes 1K --backend mem:1000 \
    --output-dir "$tmp/int" "$sample" >"$tmp/int.txt" 2>&1 &
pid=$!
sleep 0.7
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 1 ] || fail "interrupted: exit $rc, want 1"
grep -q '^PARTIAL: interrupted' "$tmp/int.txt" || fail "not marked partial: $(cat "$tmp/int.txt")"
grep -q '"partial": true' "$tmp/int/trace_replay_summary.json" ||
    fail "summary not marked partial"
records=$(sed -n 's/^records: \([0-9]*\) read.*/\1/p' "$tmp/int.txt")
[ "$records" -gt 0 ] && [ "$records" -lt 3000 ] || fail "records read: $records"

# 4. A damaged trace: what the reader yields, said, exit 3.
"$lct" replay --speed 0 --backend null "$fixtures/malformed_mixed.lct" \
    >"$tmp/dmg.txt" 2>"$tmp/dmg.err"
rc=$?
[ $rc -eq 3 ] || fail "damaged trace: exit $rc, want 3"
grep -q 'offset' "$tmp/dmg.err" || fail "damage not said: $(cat "$tmp/dmg.err")"
"$lct" replay --speed 0 --backend null "$fixtures/bad_magic.lct" \
    >/dev/null 2>&1
[ $? -eq 1 ] || fail "a refused trace should exit 1"

# 5. --compare: both backends, side by side.
"$lct" replay -q --speed 0 --value-bytes 1K --compare mem:2000 mem:50 \
    "$sample" >"$tmp/cmp.txt" || fail "compare"
head -n 1 "$tmp/cmp.txt" | grep -q 'mem:2000.*mem:50' || fail "compare header"
grep -q '^lookup hit ratio' "$tmp/cmp.txt" || fail "compare rows"
# A long name is shown whole; --json is one document, an array A then B;
# --output-dir has each backend's reports under its own name.
long="dir:$tmp/a-backend-name-well-over-fourteen-bytes"
"$lct" replay -q --speed 0 --value-bytes 1K --compare mem:2000 "$long" \
    "$sample" | head -n 1 | grep -qF "$long" || fail "compare cut $long"
"$lct" replay -q --speed 0 --value-bytes 1K --compare mem:2000 mem:50 \
    --json --output-dir "$tmp/cmpdir" "$sample" >"$tmp/cmp.json" ||
    fail "compare --json --output-dir"
py 'import json, sys
d = json.load(open(sys.argv[1]))
assert [r["backend"] for r in d] == ["mem:2000", "mem:50"], d
for i, name in enumerate(["A-mem_2000", "B-mem_50"]):
    s = json.load(open(sys.argv[2] + "/" + name + "/trace_replay_summary.json"))
    assert s["backend"] == d[i]["backend"] and s["hits"] == d[i]["hits"], name
' "$tmp/cmp.json" "$tmp/cmpdir" || fail "compare --json / --output-dir"

# --csv: the ops CSV on stdout; with --compare, a backend column first.
"$lct" replay -q --speed 0 --value-bytes 1K --backend mem:100 --csv \
    "$sample" | head -n 1 | cmp -s - "$tmp/want" || fail "--csv header"
"$lct" replay -q --speed 0 --value-bytes 1K --compare mem:2000 mem:50 \
    --csv "$sample" >"$tmp/cmp.csv" || fail "compare --csv"
[ "$(cut -d, -f1 "$tmp/cmp.csv" | tr -d '\r' | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" = \
  "1 3 3 " ] || fail "compare CSV rows: $(cat "$tmp/cmp.csv")"

# --compare reads the file twice: standard input is refused, not replayed
# once and then found empty.
cat "$sample" | "$lct" replay -q --speed 0 --compare mem:10 mem:20 - \
    >/dev/null 2>"$tmp/stdin.err"
[ $? -eq 2 ] && grep -q 'regular file' "$tmp/stdin.err" ||
    fail "--compare on standard input: $(cat "$tmp/stdin.err")"

# A control byte in a backend's argument is escaped in the message.
"$lct" replay -q --speed 0 --backend "$(printf 'mem:\033[31m')" "$sample" \
    >/dev/null 2>"$tmp/esc.err"
[ $? -eq 2 ] || fail "a bad mem: capacity is a usage error (2)"
grep -q "$(printf '\033')" "$tmp/esc.err" && fail "an escape byte reached stderr"
grep -q 'CAPACITY' "$tmp/esc.err" || fail "no message: $(cat "$tmp/esc.err")"

# A speed that puts due times out of range is refused, and says the range.
"$lct" replay --speed 1e-300 --backend null "$sample" >/dev/null 2>"$tmp/speed.err"
grep -q "0.001 to 1e+06" "$tmp/speed.err" || fail "--speed range not said: $(cat "$tmp/speed.err")"

# --scale past what a value may weigh: stored as 1 GiB each, counted and
# said (they were stored as 0 bytes, silently).
"$lct" replay --speed 0 --scale 1e5 --backend null "$sample" \
    >"$tmp/scale.out" 2>"$tmp/scale.err" || fail "--scale 1e5 failed"
grep -q "^keys over 1 GiB (stored as 1 GiB): [1-9]" "$tmp/scale.out" ||
    fail "clamped keys not counted: $(cat "$tmp/scale.out")"
grep -q "weighed over 1 GiB (layout bytes x --scale)" "$tmp/scale.err" ||
    fail "clamped keys not said: $(cat "$tmp/scale.err")"
! grep -q "no known size" "$tmp/scale.out" || fail "scaled keys called unsized"

# --output-dir that is a file: refused before anything is replayed.
: >"$tmp/a-file"
"$lct" replay -q --speed 0 --backend null --output-dir "$tmp/a-file" \
    --jsonl-out "$tmp/od.jsonl" "$sample" >"$tmp/od.out" 2>"$tmp/od.err"
[ $? -eq 1 ] || fail "--output-dir FILE: want exit 1"
grep -q "not a directory (nothing was replayed)" "$tmp/od.err" ||
    fail "--output-dir FILE not said: $(cat "$tmp/od.err")"
[ ! -s "$tmp/od.out" ] && [ ! -e "$tmp/od.jsonl" ] ||
    fail "--output-dir FILE: the run went ahead"
# ... and a missing one is made before the JSONL inside it is opened
"$lct" replay -q --speed 0 --backend null --output-dir "$tmp/new-dir" \
    --jsonl-out "$tmp/new-dir/ops.jsonl" "$sample" >/dev/null ||
    fail "--output-dir D --jsonl-out D/ops.jsonl"
[ -s "$tmp/new-dir/ops.jsonl" ] && [ -s "$tmp/new-dir/trace_replay_summary.json" ] ||
    fail "D/ops.jsonl or the reports missing"

# 6. Usage errors (exit 2).
for args in "--backend null --compare null null" "--backend s3://x" \
            "--backend null --value-bytes 1K --scale 2" "--speed -1 --backend null" \
            "--backend null --store-at later" "--backend null --csv --json" \
            "--speed 1e-300 --backend null" "--speed 1e7 --backend null" \
            "--backend mem:" "--backend mem:0" "--backend mem:10X" \
            "--backend dir:" "--backend null:x" "--backend redis://h:99999" \
            "--compare null null --jsonl-out $tmp/x.jsonl"; do
    # shellcheck disable=SC2086
    "$lct" replay $args "$sample" >/dev/null 2>&1
    [ $? -eq 2 ] || fail "'$args' should be a usage error"
done
# Standard input is named as every command names it.
"$lct" replay --speed 0 --backend null - <"$sample" 2>/dev/null | head -1 |
    grep -q '^replay of <stdin> against null' || fail "the banner should say <stdin>"
"$lct" replay --backend s3://x "$sample" 2>&1 >/dev/null |
    grep -q 'redis://HOST:PORT' || fail "an unknown backend's message lacks redis://"
# 7. mem: never holds more than 4/5 of the memory there is: a capacity
# that cannot fit is refused at open with the arithmetic (exit 1), a key
# count weighed by --value-bytes or by the trace's first key; a key
# count whose values outgrow it fails the store that would pass it, and
# the run still stops with its reports (30 keys, the first of 32 MiB and
# later ones up to 128 MiB, in 1.5 GB of address space; not under ASan,
# whose shadow memory needs more).
for cap in "mem:64T" "mem:1000 --value-bytes 1G"; do
    # shellcheck disable=SC2086
    "$lct" replay -q --speed 0 --backend $cap "$sample" >/dev/null \
        2>"$tmp/cap.err"
    [ $? -eq 1 ] || fail "$cap should be refused (1)"
    grep -q 'GiB available): give at most \(mem:[0-9]* (keys), \)\?mem:[0-9]*M' "$tmp/cap.err" ||
        fail "$cap: no arithmetic: $(cat "$tmp/cap.err")"
done
if ! grep -q __asan_init "$lct"; then
    "$lct" gen -n 400 --sizes 4 --seed 3 "$tmp/big.lct" || fail "gen"
    # shellcheck disable=SC3045 # dash, Debian's sh, has ulimit -v
    (ulimit -v 1500000
     "$lct" replay -q --speed 0 --backend mem:30 --max-errors 1 \
         --output-dir "$tmp/budget" "$tmp/big.lct" >/dev/null)
    [ $? -eq 1 ] || fail "mem:30 past the budget should exit 1"
    grep -q '"first": "mem: [0-9]* keys hold .* give at most mem:' \
        "$tmp/budget/trace_replay_summary.json" ||
        fail "mem:30 past the budget: no ENOMEM with the arithmetic"
fi
# 13. --l1: the backend behind it hits as lct mrc --l1's curve says at
# each L2 capacity (token hit ratio: the prefix rule over chunks); the
# banner says which model runs; a capacity of 0 or none is usage (2).
"$lct" mrc -q --l1 64 --json "$sample" >"$tmp/l1.json" || fail "mrc --l1"
py 'import json, sys
for p in json.load(open(sys.argv[1]))["curve"][2:7]:
    print(p["keys"], repr(p["token_hit_ratio"]))' "$tmp/l1.json" \
    >"$tmp/l1points"
[ "$(wc -l <"$tmp/l1points")" -eq 5 ] || fail "too few --l1 curve points"
while read -r keys want; do
    "$lct" replay -q --speed 0 --backend "mem:$keys" --l1 64 --value-bytes 64 \
        --store-at reserve --fill-on-miss --json "$sample" >"$tmp/r.json" ||
        fail "replay --l1 64 mem:$keys"
    py 'import json, sys
d = json.load(open(sys.argv[1]))
got, want = d["token_hit_ratio"], float(sys.argv[2])
assert d["l1"]["keys_to_backend"] == d["lookups"], d["l1"]
sys.exit(0 if abs(got - want) < 1e-12 else
         "--l1 64 mem:%s token hit ratio %r, lct mrc --l1 %r"
         % (sys.argv[3], got, want))' "$tmp/r.json" "$want" "$keys" ||
        fail "--l1 token hit ratios differ"
done <"$tmp/l1points"
"$lct" replay --speed 0 --backend null --l1 16G "$sample" >"$tmp/l1.txt" ||
    fail "replay --l1 16G"
grep -q '^an L1 of 17179869184 bytes in front' "$tmp/l1.txt" ||
    fail "no L1 banner: $(head -3 "$tmp/l1.txt")"
grep -q '^L1 of 17179869184 bytes: served' "$tmp/l1.txt" || fail "no L1 line"
# --l1-policy: named in the banner and the JSON when not LRU
"$lct" replay --speed 0 --backend null --l1 64 --l1-policy s3fifo "$sample" \
    >"$tmp/l1p.txt" || fail "replay --l1-policy s3fifo"
grep -q '^an L1 of 64 keys, evicting by s3fifo in front' "$tmp/l1p.txt" ||
    fail "no L1 policy in the banner: $(head -3 "$tmp/l1p.txt")"
"$lct" replay -q --speed 0 --backend null --l1 64 --l1-policy s3fifo --json \
    "$sample" | py 'import json, sys
assert json.load(sys.stdin)["l1"]["policy"] == "s3fifo"' ||
    fail "no L1 policy in the JSON"
"$lct" replay --speed 0 --backend null --l1 64 --l1-policy belady "$sample" \
    >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "belady needs the trace's future" "$tmp/err" ||
    fail "--l1-policy belady not refused: $(cat "$tmp/err")"
"$lct" replay --speed 0 --backend null "$sample" >"$tmp/nol1.txt" ||
    fail "replay null"
grep -q '^no L1: every lookup reaches the backend' "$tmp/nol1.txt" ||
    fail "no 'no L1' banner"
grep -q 'prefix rule: [0-9]* of [0-9]* chunks hit' "$tmp/nol1.txt" ||
    fail "no prefix-rule line"
for bad in 0 x ""; do
    "$lct" replay -q --speed 0 --backend null --l1 "$bad" "$sample" \
        >/dev/null 2>&1
    [ $? -eq 2 ] || fail "--l1 '$bad' should be a usage error (2)"
done
# 14. dir: never fills its disk: on an 8 MiB tmpfs (a mount namespace of
# our own, where the kernel allows one) a 16 MiB value is refused at
# open, and 1 MiB values fail once 4/5 of it is held, with the
# arithmetic, the reports still written.
mkdir "$tmp/small"
if unshare -rm true 2>/dev/null; then
    LCT="$lct" SAMPLE="$sample" SMALL="$tmp/small" unshare -rm sh -c '
        mount -t tmpfs -o size=8m tmpfs "$SMALL" || exit 9
        "$LCT" replay -q --speed 0 --value-bytes 16M \
            --backend "dir:$SMALL/kv" "$SAMPLE" 2>"$SMALL/open.err"
        [ $? -eq 1 ] || exit 10
        grep -q "passes 4/5 of the 8.00 MiB free there" "$SMALL/open.err" ||
            exit 11
        "$LCT" replay -q --speed 0 --value-bytes 1M --max-errors 1 \
            --output-dir "$SMALL/out" --backend "dir:$SMALL/kv" "$SAMPLE" \
            >/dev/null
        [ $? -eq 1 ] || exit 12
        grep -q "\"first\": \"dir:.*MiB stored, 1048576 bytes more pass 4/5" \
            "$SMALL/out/trace_replay_summary.json" || exit 13
        [ "$(ls "$SMALL/kv" | wc -l)" -le 6 ] || exit 14
        # no --value-bytes: the trace'"'"'s first key is checked at open
        "$LCT" replay -q --speed 0 --backend "dir:$SMALL/kv" "$SAMPLE" \
            2>"$SMALL/first.err"
        [ $? -eq 1 ] || exit 15
        grep -q "one value of the trace.s first key, [0-9]* bytes passes" \
            "$SMALL/first.err" || exit 16'
    rc=$?
    [ $rc -eq 0 ] || fail "dir: on a small disk (step $rc)"
else
    echo "replay-cli: no mount namespace here: dir:'s disk budget not run"
fi
# A key count that cannot fit, weighed by the trace's first key, is
# refused at once with the arithmetic and what would fit.
"$lct" replay --speed 0 --backend mem:1000000 "$sample" > /dev/null 2> "$tmp/mem.err"
rc=$?
[ $rc -eq 1 ] || fail "mem:1000000 keys: status $rc"
grep -q "would hold 1000000 keys x [0-9]* bytes (the trace's first key)" \
    "$tmp/mem.err" || fail "mem:1000000 keys: $(cat "$tmp/mem.err")"
grep -q "give at most mem:[0-9]* (keys)" "$tmp/mem.err" ||
    fail "mem:1000000 keys: no key count that fits"
echo "replay-cli: mem equals mrc, LMCache's files, Ctrl-C, damage, --compare, usage, --l1, dir: budget, key counts checked at open"
