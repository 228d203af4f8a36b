#!/bin/sh
# lct sim from the command line: on a one-rank trace its figures are the
# prefix curve's at the same capacity (lct mrc --prefix), a byte capacity
# holding as many 32 MiB keys gives the same run, the text report's
# labels are LMCache's, the CSV is its distributions, the SVG has its
# seven panels and never lands on the trace, usage errors exit 2 and a
# damaged trace 3; on a hand-made lookup log its text report is LMCache's,
# line for line.
set -u
lct="$LCT_BUILDDIR/tools/lct"
src="$LCT_SRCDIR"
sample="$src/examples/sample.lct"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }
# LOG imported, then lct sim at CAP, its text report diffed with GOLDEN.
log_report() { # LOG CAP GOLDEN WHAT
    "$lct" import lookup-logs -q "$1" "$tmp/log.lct" || say "import: $4"
    "$lct" sim -q --capacity "$2" "$tmp/log.lct" > "$tmp/log.txt" ||
        say "sim: $4"
    diff "$src/test/golden/$3" "$tmp/log.txt" || say "$4"
}

# lct sim counts a chunk as one entry (LMCache's simulator's model) and
# lct mrc --prefix a key: on a one-rank trace, with 32 MiB keys as the
# sample's, the two are the same.
one="$tmp/one.lct"
"$lct" gen -n 3000 --kv-ranks 1 --seed 4 "$one" > /dev/null || say "gen"
"$lct" sim --capacity 128 --json "$one" > "$tmp/k.json" || say "sim --json"
"$lct" sim --capacity 4GiB --json "$one" > "$tmp/b.json" || say "sim 4GiB"
"$lct" mrc --prefix --json "$one" > "$tmp/mrc.json" || say "mrc --prefix"
python3 - "$tmp" <<'EOF' || fail=1
import json, sys
d = sys.argv[1]
k = json.load(open(d + "/k.json"))
b = json.load(open(d + "/b.json"))
m = json.load(open(d + "/mrc.json"))
point = [p for p in m["curve"] if p["keys"] == 128][0]
ok = True
def check(what, got, want):
    global ok
    if got != want:
        print(f"FAIL: {what}: {got} != {want}")
        ok = False
check("keys hit over keys = the prefix curve's hit ratio at 128 keys",
      k["keys_hit"] / k["keys"], point["hit_ratio"])
check("token hit rate = the prefix curve's at 128 keys",
      k["token_hit_rate"], point["token_hit_ratio"])
check("requests = the prefix curve's lookups", k["requests"], m["calls"])
check("tokens = chunks x the header's chunk size",
      k["total_tokens"], k["chunks"] * 256)
check("the cumulative rate at 100% is the whole run's",
      k["cumulative"][4]["token_hit_rate"], k["token_hit_rate"])
for f in ("token_hit_rate", "evictions", "occupancy_keys", "span",
          "lru_position", "chunk_reuse"):
    check(f"4 GiB of 32 MiB keys is 128 keys: {f}", b[f], k[f])
check("capacity unit", b["capacity_unit"], "bytes")
check("series in order", [p["requests"] for p in k["series"]],
      sorted(p["requests"] for p in k["series"]))
sys.exit(0 if ok else 1)
EOF

# Two tiers: lct sim --l1's L2 and both tiers are lct mrc --l1's at the
# same L2 capacity.
"$lct" sim --l1 64 --capacity 128 --json "$one" > "$tmp/l1s.json" ||
    say "sim --l1"
"$lct" mrc --l1 64 --json "$one" > "$tmp/l1m.json" || say "mrc --l1"
python3 - "$tmp" <<'EOF' || fail=1
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/l1s.json"))
m = json.load(open(d + "/l1m.json"))
p = [x for x in m["curve"] if x["keys"] == 128][0]
bad = []
if s["token_hit_rate"] != p["token_hit_ratio"]:
    bad.append(("L2 token hit rate", s["token_hit_rate"], p["token_hit_ratio"]))
if abs(s["both_token_hit_rate"] - p["both_token_hit_ratio"]) > 1e-12:
    bad.append(("both tiers", s["both_token_hit_rate"], p["both_token_hit_ratio"]))
for k in ("keys", "keys_hit", "keys_to_l2", "writes_through", "evictions"):
    if s["l1"][k] != m["l1"][k]:
        bad.append(("L1 " + k, s["l1"][k], m["l1"][k]))
for b in bad:
    print("FAIL: --l1:", *b)
sys.exit(1 if bad else 0)
EOF

"$lct" sim --capacity 128 "$sample" > "$tmp/text" || say "sim text"
for label in "Requests processed  :" "Token hit rate      :" \
    "Stat 1 — Per-request token hit rate distribution" \
    "Stat 7 — Cache position at hit (0 = MRU, max = LRU)" \
    "Total evictions    :"; do
    grep -qF "$label" "$tmp/text" || say "text report lacks '$label'"
done
"$lct" sim --capacity 128 --csv "$sample" | head -1 | tr -d '\r' |
    grep -qx 'distribution,count,mean,max,p25,p50,p75,p90,p99' ||
    say "CSV header"

"$lct" sim --capacity 128 --svg "$tmp/s.svg" "$sample" > /dev/null ||
    say "sim --svg"
n=$(grep -c 'font-weight="bold">[1-7]\. ' "$tmp/s.svg")
[ "$n" = 7 ] || say "SVG has $n numbered panels, not 7"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' \
    "$tmp/s.svg" || say "SVG is not well-formed XML"
cp "$sample" "$tmp/t.lct"
"$lct" sim --capacity 128 --svg "$tmp/t.lct" "$tmp/t.lct" > /dev/null 2>&1
[ $? -eq 2 ] || say "--svg onto the trace should be refused with 2"
cmp -s "$sample" "$tmp/t.lct" || say "the trace was overwritten"

for bad in "" "--capacity 0" "--capacity 12X" "--capacity -5" \
    "--capacity 1.5keys"; do
    # shellcheck disable=SC2086
    "$lct" sim $bad "$sample" > /dev/null 2>&1
    [ $? -eq 2 ] || say "lct sim $bad should be a usage error"
done
"$lct" sim -q --capacity 64 "$src/test/fixtures/malformed_mixed.lct" \
    > /dev/null 2>&1
[ $? -eq 3 ] || say "a damaged trace should exit 3"

# LMCache's report line for line on a hand-made lookup log, imported:
# lookups [a] [a b] [a b c] [a b c d] of 32 MiB chunks at 64 MiB (two
# chunks), worked out by hand from simulator.py's simulate() and
# print_statistics (64600bc): prefixes 0 1 2 0 (a, b evicted at the end:
# 5 evictions), hit tokens 768 of 2,560; positions before each request
# 0 | 1 0, spans 1 | 2 2; Stat 4 at requests int(4 f) clamped to >= 1
# (the whole report: test/golden/sim-report-hand.txt).
mkdir "$tmp/hand"
hand="$tmp/hand/lookup_hashes_20261206_000000_000000.jsonl"
n=0
for hashes in '"0xa1"' '"0xa1", "0xb2"' '"0xa1", "0xb2", "0xc3"' \
    '"0xa1", "0xb2", "0xc3", "0xd4"'; do
    n=$((n + 1))
    printf '{"timestamp": %d.0, "request_id": "r%d", "model_name": "m", "chunk_size": 256, "seq_len": %d, "dtypes": ["bfloat16"], "shapes": [[2, 32, 256, 8, 128]], "chunk_hashes": [%s]}\n' \
        "$n" "$n" $((n * 256)) "$hashes" >> "$hand"
done
log_report "$hand" 0.0625GiB sim-report-hand.txt \
    "the report is not LMCache's, line for line"

# LMCache's log conventions (test/golden/lookup-log-conventions.jsonl),
# imported and simulated as simulate() does:
# tokens are seq_len, tail included (300 tokens of one 256-token chunk);
# a lookup of no whole chunk but 100 tokens is a request, all missed; a
# line's own chunk_size counts its hits (128), a missing one counts 1;
# the cache keys by the hash alone (0xa1 under model m2 hits m's); a line
# with neither hashes nor tokens is skipped.  By hand: requests 5, tokens
# 300 + 600 + 100 + 256 + 40 = 1,296, hits 256 + 256 + 1 = 513; rates
# 0, 256/600, 0, 1, 1/40 (p50 rank 3: 2.50%, p75 rank 4: 42.67%).
mkdir "$tmp/conv"
conv="$tmp/conv/lookup_hashes_20261206_000000_000001.jsonl"
cp "$src/test/golden/lookup-log-conventions.jsonl" "$conv"
log_report "$conv" 1GiB sim-report-log-conventions.txt \
    "tails, empty lookups, chunk sizes: not LMCache's report"

# LMCache's dtype table sizes a chunk (compute_kv_bytes_per_chunk): a
# dtype outside it weighs 0, so bfloat16 + uint8 layers weigh the
# bfloat16 part alone (32 MiB: two chunks in 64 MiB, where lct's own
# table, which knows uint8, would make 40 MiB and one chunk); a first
# lookup whose dtypes all fall outside ("torch.bfloat16") weighs 0, and a
# byte capacity is refused, as LMCache's simulator refuses it.
mkdir "$tmp/dt"
cp "$src/test/golden/lookup-log-dtypes.jsonl" \
    "$tmp/dt/lookup_hashes_20261206_000000_000002.jsonl"
log_report "$tmp/dt" 0.0625GiB sim-report-log-dtypes.txt \
    "dtypes outside LMCache's table: not LMCache's report"
printf '%s\n' '{"timestamp": 1.0, "request_id": "e1", "model_name": "m", "chunk_size": 256, "seq_len": 512, "dtypes": ["torch.bfloat16"], "shapes": [[2, 32, 256, 8, 128]], "chunk_hashes": ["0xa1", "0xb2"]}' \
    > "$tmp/torch.jsonl"
"$lct" import lookup-logs -q "$tmp/torch.jsonl" "$tmp/torch.lct" ||
    say "import torch.bfloat16"
if "$lct" sim -q --capacity 1GiB "$tmp/torch.lct" > /dev/null 2> "$tmp/err"
then
    say "a first lookup of 0 bytes a chunk should refuse a byte capacity"
fi
grep -q "offset 178.*0 bytes a chunk" "$tmp/err" ||
    say "the refusal should name the record: $(cat "$tmp/err")"
"$lct" sim -q --capacity 2 "$tmp/torch.lct" > /dev/null ||
    say "a capacity in chunks needs no size"

# LMCache keys its simulator by the hash string: 0xabc, 0x0abc and
# 0xABC are three keys (hex(int) would write the first only), so of five
# lookups 0xabc 0x0abc 0xABC 0xabc 0x0abc the last two hit, and the
# three keys stay three through an export and a second import.
for h in 0xabc 0x0abc 0xABC 0xabc 0x0abc; do
    printf '{"timestamp": 1.0, "request_id": "h", "model_name": "m", "chunk_size": 256, "seq_len": 256, "dtypes": ["bfloat16"], "shapes": [[2, 32, 256, 8, 128]], "chunk_hashes": ["%s"]}\n' "$h"
done > "$tmp/hex.jsonl"
"$lct" import lookup-logs -q "$tmp/hex.jsonl" "$tmp/hex.lct" ||
    say "import hex spellings"
"$lct" keys -q --lookup-jsonl "$tmp/hex-back.jsonl" "$tmp/hex.lct" ||
    say "export hex spellings"
"$lct" import lookup-logs -q "$tmp/hex-back.jsonl" "$tmp/hex-back.lct" ||
    say "import the export"
for f in hex hex-back; do
    "$lct" sim -q --capacity 10 --json "$tmp/$f.lct" > "$tmp/$f.json" ||
        say "sim $f"
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
got = (d["requests"], d["distinct_keys"], d["keys_hit"])
sys.exit(0 if got == (5, 3, 2) else "%s: %s, want (5, 3, 2)" % (sys.argv[1], got))' \
        "$tmp/$f.json" || say "hex spellings are not LMCache's keys ($f)"
done

# simulate() takes a missing seq_len as 0 (event.get("seq_len", 0)): of
# two lookups of 0xa1 0xb2, the first without seq_len counts 0 tokens,
# the second 600 with both chunks hit: 2 requests, 600 tokens, 512 hit.
# A seq_len of "x" (simulate() fails on it) and a chunk_size of -5
# (counted as is there) are refused: warned with file:line, skipped,
# exit 3.
line() { # SEQ_LEN_PAIR CHUNK_SIZE
    printf '{"timestamp": 1.0, "request_id": "s", "model_name": "m", %s"chunk_size": %s, "dtypes": ["bfloat16"], "shapes": [[2, 32, 256, 8, 128]], "chunk_hashes": ["0xa1", "0xb2"]}\n' "$1" "$2"
}
{ line "" 256; line '"seq_len": 600, ' 256; line '"seq_len": "x", ' 256
  line '"seq_len": 600, ' -5; } > "$tmp/seq.jsonl"
"$lct" import lookup-logs "$tmp/seq.jsonl" "$tmp/seq.lct" 2> "$tmp/seq.err"
[ $? -eq 3 ] || say "mistyped seq_len or chunk_size: exit 3 expected"
for n in 3 4; do
    grep -q "seq.jsonl:$n: skipping malformed line: seq_len and chunk_size" \
        "$tmp/seq.err" || say "line $n not refused: $(cat "$tmp/seq.err")"
done
"$lct" sim -q --capacity 1GiB --json "$tmp/seq.lct" > "$tmp/seq.json" ||
    say "sim seq"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
got = (d["requests"], d["total_tokens"], d["hit_tokens"])
sys.exit(0 if got == (2, 600, 512) else "missing seq_len: %s, want (2, 600, 512)" % (got,))' \
    "$tmp/seq.json" || say "a missing seq_len is not counted as 0"

# A log whose first line has no chunk_size leaves the header without
# one, but its lookups state their tokens: the report counts tokens as
# simulate() does (chunk_size 1 a hit chunk), not chunks.
line "\"seq_len\": 600, " 256 | sed 's/"chunk_size": 256, //' > "$tmp/nocs.jsonl"
"$lct" import lookup-logs -q "$tmp/nocs.jsonl" "$tmp/nocs.lct" ||
    say "import nocs"
"$lct" sim -q --capacity 1GiB "$tmp/nocs.lct" > "$tmp/nocs.txt" || say "sim nocs"
grep -q "^  Total tokens        : 600$" "$tmp/nocs.txt" ||
    say "no chunk_size: tokens not counted: $(head -8 "$tmp/nocs.txt")"

# LMCache's IsolatedLRU: quotas per cache_salt, in the capacity's unit
# (--quota =CAP for keys without a salt); the report names them.  The
# sample's keys carry no salt: with no quota for it nothing stays.
sample="$LCT_SRCDIR/examples/sample.lct"
"$lct" sim -q --json --capacity 64GiB --policy lmcache-isolated-lru \
    --quota '=1GiB,tenant-9=2GiB' "$sample" > "$tmp/iso.json" ||
    say "sim isolated"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ok = d["quotas"] == {"": 1073741824, "tenant-9": 2147483648} and \
    d["hit_chunks"] > 0 and d["policy"] == "lmcache-isolated-lru"
sys.exit(0 if ok else "quotas %s, hits %s" % (d.get("quotas"), d["hit_chunks"]))' \
    "$tmp/iso.json" || say "isolated: the report"
"$lct" sim -q --json --capacity 64GiB --policy lmcache-isolated-lru \
    --quota 'tenant-9=2GiB' "$sample" | grep -q '"hit_chunks":0,' ||
    say "isolated: keys of a salt without a quota were kept"
"$lct" sim --capacity 64GiB --policy lmcache-isolated-lru --quota =1GiB \
    "$sample" | grep -q '^Quotas: (no salt) 1073741824 B; any other salt' ||
    say "isolated: the text report does not name the quotas"
for bad in "--quota =1G" "--policy lmcache-isolated-lru --quota =100" \
           "--policy lmcache-isolated-lru --quota x" \
           "--policy lru --l1 1G --l1-policy lmcache-isolated-lru"; do
    # shellcheck disable=SC2086
    "$lct" sim --capacity 64GiB $bad "$sample" > /dev/null 2>&1
    [ $? -eq 2 ] || say "sim $bad: exit 2 expected"
done
"$lct" mrc --policy lmcache-isolated-lru "$sample" > /dev/null 2>&1
[ $? -eq 2 ] || say "mrc --policy lmcache-isolated-lru: exit 2 expected"

[ $fail -eq 0 ] && echo "sim-cli: ok"
exit $fail
