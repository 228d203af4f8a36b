#!/bin/sh
# lct sim from the command line: its figures are the prefix curve's at
# the same capacity (lct mrc --prefix), a byte capacity holding as many
# of the sample's 32 MiB keys gives the same run, the text report's
# labels are LMCache's, the CSV is its distributions, the SVG has its
# seven panels and never lands on the trace, usage errors exit 2 and a
# damaged trace 3.
set -u
lct="$LCT_BUILDDIR/tools/lct"
src="$LCT_SRCDIR"
sample="$src/examples/sample.lct"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

"$lct" sim --capacity 128 --json "$sample" > "$tmp/k.json" || say "sim --json"
"$lct" sim --capacity 4GiB --json "$sample" > "$tmp/b.json" || say "sim 4GiB"
"$lct" mrc --prefix --json "$sample" > "$tmp/mrc.json" || say "mrc --prefix"
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
"$lct" sim --l1 64 --capacity 128 --json "$sample" > "$tmp/l1s.json" ||
    say "sim --l1"
"$lct" mrc --l1 64 --json "$sample" > "$tmp/l1m.json" || say "mrc --l1"
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
    "Stat 1 - Per-request token hit rate distribution" \
    "Stat 7 - Cache position at hit (0 = MRU, max = LRU)" \
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

[ $fail -eq 0 ] && echo "sim-cli: ok"
exit $fail
