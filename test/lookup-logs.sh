#!/bin/sh
# LMCache's lookup-hash logs both ways: `lct keys --lookup-jsonl` writes
# lines with LMCache's fields in its order; LMCache's simulator's own
# loop (simulate() of lmcache/tools/cache_simulator/simulator.py, written
# out below) over those lines gives `lct sim`'s token hit rate;
# `lct import lookup-logs` reads them back into a trace whose prefix
# curve is the original's over its lookups; malformed lines are warned
# about with file:line and skipped (exit 3); OUT is never a log.
set -u
lct="$LCT_BUILDDIR/tools/lct"
src="$LCT_SRCDIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

# One kv rank, so a key is a chunk as in LMCache's logs.
"$lct" gen -n 3000 --kv-ranks 1 --seed 5 "$tmp/t.lct" > /dev/null
mkdir "$tmp/logs"
log="$tmp/logs/lookup_hashes_20251201_000000_000000.jsonl"
"$lct" keys -q --lookup-jsonl "$log" "$tmp/t.lct" || say "export"
"$lct" sim -q --capacity 100 --lookups-only --json "$tmp/t.lct" > "$tmp/sim.json"

python3 - "$log" "$tmp/sim.json" <<'EOF' || fail=1
import json, sys
from collections import OrderedDict
lines = [json.loads(l) for l in open(sys.argv[1])]
ok = True
fields = ["timestamp", "request_id", "model_name", "chunk_size", "seq_len",
          "dtypes", "shapes", "chunk_hashes"]
for e in lines:
    if list(e) != fields:
        print("FAIL: fields", list(e)); ok = False; break
    if e["seq_len"] != len(e["chunk_hashes"]) * e["chunk_size"]:
        print("FAIL: seq_len"); ok = False; break
# LMCache's simulate(): hit_prefix by contains(); then access the prefix,
# insert the rest; token rate = hit_prefix * chunk_size / seq_len sums.
cap = 100
cache = OrderedDict()
total = hit = 0
for e in sorted(lines, key=lambda e: e["timestamp"]):
    hashes = e["chunk_hashes"]
    prefix = 0
    for h in hashes:
        if h in cache:
            prefix += 1
        else:
            break
    total += e["seq_len"]
    hit += prefix * e["chunk_size"]
    for i, h in enumerate(hashes):
        if h in cache:
            cache.move_to_end(h)
        else:
            cache[h] = True
            if len(cache) > cap:
                cache.popitem(last=False)
sim = json.load(open(sys.argv[2]))
if abs(hit / total - sim["token_hit_rate"]) > 1e-12:
    print("FAIL: LMCache's simulator on the log", hit / total,
          "lct sim", sim["token_hit_rate"]); ok = False
if sim["requests"] != len(lines):
    print("FAIL: requests", sim["requests"], len(lines)); ok = False
sys.exit(0 if ok else 1)
EOF

# Back again: the prefix curve, keys and tokens, is the original's over
# its lookups.
"$lct" import -q lookup-logs "$tmp/logs" "$tmp/back.lct" || say "import"
"$lct" mrc -q --prefix --lookups-only --csv "$tmp/t.lct" > "$tmp/a.csv"
"$lct" mrc -q --prefix --csv "$tmp/back.lct" > "$tmp/b.csv"
cmp -s "$tmp/a.csv" "$tmp/b.csv" || say "round trip changed the prefix curve"
"$lct" check -q "$tmp/back.lct" > /dev/null || say "the imported trace is not clean"

# Malformed lines: each warned about with file and line, the rest kept.
bad="$tmp/bad/lookup_hashes_x.jsonl"
mkdir "$tmp/bad"
head -n 2 "$log" > "$bad"
printf '%s\n' '{"timestamp": 1, "chunk_hashes": [' '[1, 2]' \
    '{"timestamp": "x", "chunk_hashes": []}' \
    '{"timestamp": 2, "chunk_hashes": "0xab"}' \
    '{"timestamp": 3, "chunk_hashes": ["0xzz"]}' \
    '{"timestamp": 4, "request_id": "r", "model_name": "m"}' \
    '{"timestamp": 5, "request_id": "r", "chunk_hashes": ["0xab"]}' \
    '' >> "$bad"
tail -n 1 "$log" >> "$bad"
"$lct" import lookup-logs "$tmp/bad" "$tmp/bad.lct" 2> "$tmp/err"
[ $? -eq 3 ] || say "malformed lines should exit 3"
grep -q "jsonl:8: skipping malformed line: no chunk_hashes" "$tmp/err" ||
    say "a line without chunk_hashes is not named"
grep -q "jsonl:9: skipping malformed line: no model_name" "$tmp/err" ||
    say "a line without model_name is not named"
for n in 3 4 5 6 7 8 9; do
    grep -q "lookup_hashes_x.jsonl:$n: skipping malformed line" "$tmp/err" ||
        say "no warning for line $n"
done
[ "$("$lct" info -q "$tmp/bad.lct" | sed -n 's/.*total_records: *//p')" = 3 ] ||
    say "the three good lines should make three records"

# lct export --hit-rate feeds the simulation as lct sim does: an imported
# lookup counts the tokens it logged (here 77 past its whole chunks), so
# its windows' rates are sim --window's to the digit.
mkdir "$tmp/partial"
python3 - "$log" "$tmp/partial/lookup_hashes_20251201_000000_000000.jsonl" <<'EOF2'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], "w") as out:
    for e in lines:
        e["seq_len"] += 77
        out.write(json.dumps(e) + "\n")
EOF2
"$lct" import lookup-logs -q "$tmp/partial" "$tmp/partial.lct" > /dev/null ||
    say "import of the partial-chunk logs"
"$lct" sim -q --capacity 100 --window 1 --json "$tmp/partial.lct" \
    > "$tmp/partial-sim.json" || say "sim --window"
"$lct" export -q --perfetto "$tmp/partial.json" --hit-rate 100 --window 1 \
    "$tmp/partial.lct" || say "export --hit-rate"
python3 - "$tmp/partial-sim.json" "$tmp/partial.json" <<'EOF2' || fail=1
import json, sys
sim = [w["token_hit_rate"] for w in json.load(open(sys.argv[1]))["windows"]]
events = json.load(open(sys.argv[2]))
events = events["traceEvents"] if isinstance(events, dict) else events
export = [e["args"]["rate"] for e in events if e.get("name") == "token hit rate"]
if not sim or export != sim:
    print("FAIL: export --hit-rate", export[:3], "!= sim --window", sim[:3])
    sys.exit(1)
EOF2

# OUT is never one of the logs, named or found in a directory.
cp "$log" "$tmp/keep.jsonl"
"$lct" import lookup-logs "$tmp/logs" "$log" > /dev/null 2>&1
[ $? -eq 2 ] || say "OUT that is a log should be refused with 2"
cmp -s "$log" "$tmp/keep.jsonl" || say "a log was overwritten"
"$lct" keys --lookup-jsonl "$tmp/t.lct" "$tmp/t.lct" > /dev/null 2>&1
[ $? -eq 2 ] || say "--lookup-jsonl onto the trace should be refused"

# Standard output read only in part (| head): exit 0, nothing said, as
# every command ends on a closed pipe; /dev/stdout names it too.
for out in - /dev/stdout; do
    for opt in --lookup-jsonl --oracle-general; do
        ("$lct" keys -q "$opt" "$out" "$tmp/t.lct" 2> "$tmp/e"
         echo $? > "$tmp/rc") | head -c 10 > /dev/null
        [ "$(cat "$tmp/rc")" = 0 ] && [ ! -s "$tmp/e" ] ||
            say "keys $opt $out | head: status $(cat "$tmp/rc"), said $(cat "$tmp/e")"
    done
done

[ $fail -eq 0 ] && echo "lookup-logs: ok"
exit $fail
