#!/bin/sh
# lct sim against LMCache's cache simulator's procedure on the same
# lookups, every statistic: each trace shape (two ranks, eight ranks with
# object groups and a salt, request specs, a fleet's mix of models and
# layouts) is exported with `lct keys --lookup-jsonl`, and the procedure
# of LMCache's lmcache/tools/cache_simulator/simulator.py (simulate(),
# _percentiles and print_statistics' Stat 4 points at 64600bc; the LRU of
# lru_cache.py), written out below, is run on the export at capacities in
# GiB from below one chunk up, and in chunks.  `lct sim --lookups-only`
# on the trace must give the same figures.  The export itself must be
# what LookupHashLoggingSubscriber writes: a hash a chunk (the ranks of a
# chunk are one), seq_len in tokens, a request spec's layout; and lct
# gen must write keys as LMCache makes them, and lct mrc --prefix, lct sim
# and lct replay --fill-on-miss count the same chunks hit.  The
# procedure runs in the first python3 on PATH (any 3.x).
set -u
lct="$LCT_BUILDDIR/tools/lct"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

n=0
for shape in "" "--shape llama" "--spec" "--mix"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$lct" gen -n 2500 --seed $n $shape "$tmp/t$n.lct" > /dev/null ||
        say "gen $shape"
    "$lct" keys -q --lookup-jsonl "$tmp/t$n.jsonl" "$tmp/t$n.lct" ||
        say "export $shape"
    for cap in 0.01GiB 0.5GiB 2GiB 40; do
        "$lct" sim -q --lookups-only --capacity "$cap" --json \
            "$tmp/t$n.lct" > "$tmp/t$n-$cap.json" || say "sim $shape $cap"
    done
done

python3 - "$tmp" <<'EOF' || fail=1
import json, math, sys
from collections import OrderedDict, defaultdict
d = sys.argv[1]
DTYPE = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1,
         "float8_e5m2": 1, "int8": 1, "int32": 4, "int64": 8}


def nearest(values, p):  # _percentiles: rank ceil(p n / 100), from 1
    s = sorted(values)
    n = len(s)
    return s[min(max((p * n + 99) // 100, 1), n) - 1]


def simulate(events, chunks):
    """simulate(): the leading run the cache contains, each hit's span
    and LRU position taken before the request touches the cache, then
    access the run and insert the rest (the least recent evicted)."""
    cache = OrderedDict()  # least recent first
    ev = total = hit_t = 0
    rates, prefixes, rolling = [], [], []
    reuse, last, spans, pos = defaultdict(int), {}, [], []
    gidx = 0
    for e in events:
        hs, seq, cs = e["chunk_hashes"], e["seq_len"], e["chunk_size"]
        if not hs and seq == 0:
            continue
        run = 0
        for h in hs:
            if h not in cache:
                break
            run += 1
        total += seq
        hit_t += run * cs
        rates.append(run * cs / seq if seq else 0.0)
        prefixes.append(run)
        rolling.append(hit_t / total if total else 0.0)
        order = list(cache)
        for i, h in enumerate(hs[:run]):
            reuse[h] += 1
            if h in last:
                spans.append(gidx + i - last[h])
            pos.append(len(order) - 1 - order.index(h))
        for i, h in enumerate(hs):
            last[h] = gidx + i
            if h in cache:
                cache.move_to_end(h)
            else:
                if len(cache) >= chunks:
                    cache.popitem(last=False)
                    ev += 1
                cache[h] = None
        gidx += len(hs)
    return dict(ev=ev, total=total, hit=hit_t, rates=rates,
                prefixes=prefixes, rolling=rolling, reuse=list(reuse.values()),
                spans=spans, pos=pos, occ=len(cache))


bad = []
def check(what, got, want):
    if got != want:
        bad.append(f"{what}: lct {got!r}, LMCache {want!r}")

for n in range(1, 5):
    events = [json.loads(l) for l in open(f"{d}/t{n}.jsonl")]
    for e in events:
        if len(e["chunk_hashes"]) * e["chunk_size"] != e["seq_len"]:
            bad.append(f"t{n}: seq_len is not chunks x chunk_size")
            break
        if len(set(e["chunk_hashes"])) != len(e["chunk_hashes"]):
            bad.append(f"t{n}: a hash twice in one lookup")
            break
    events.sort(key=lambda e: e.get("timestamp", 0.0))
    first = events[0]
    bpc = sum(math.prod(s) * DTYPE[t]
              for s, t in zip(first["shapes"], first["dtypes"]))
    if not bpc:
        bad.append(f"t{n}: no layout in the export")
        continue
    for cap in ("0.01GiB", "0.5GiB", "2GiB", "40"):
        chunks = (max(1, int(float(cap[:-3]) * 2**30) // bpc)
                  if cap.endswith("GiB") else int(cap))
        w = simulate(events, chunks)
        g = json.load(open(f"{d}/t{n}-{cap}.json"))
        at = f"t{n} {cap}"
        check(at + " chunks held", g["capacity_keys"], chunks)
        check(at + " requests", g["requests"], len(w["rates"]))
        check(at + " tokens", g["total_tokens"], w["total"])
        check(at + " hit tokens", g["hit_tokens"], w["hit"])
        check(at + " evictions", g["evictions"], w["ev"])
        check(at + " occupancy", g["occupancy_keys"], w["occ"])
        r = g["request_hit_rate"]
        check(at + " zero-hit requests", g["requests_no_hit"],
              sum(1 for x in w["rates"] if x == 0.0))
        check(at + " full-hit requests", g["requests_all_hit"],
              sum(1 for x in w["rates"] if x == 1.0))
        check(at + " mean rate", r["mean"], sum(w["rates"]) / len(w["rates"]))
        for p in (25, 50, 75, 90, 99):
            check(f"{at} rate p{p}", r[f"p{p}"], nearest(w["rates"], p))
        for name, vals in (("hit_prefix_chunks", w["prefixes"]),
                           ("chunk_reuse", w["reuse"]),
                           ("span", w["spans"]),
                           ("lru_position", w["pos"])):
            got = g[name]
            check(f"{at} {name} count", got["count"], len(vals))
            if not vals:
                continue
            check(f"{at} {name} mean", got["mean"], sum(vals) / len(vals))
            check(f"{at} {name} max", got["max"], max(vals))
            for p in (25, 50, 75, 90, 99):
                check(f"{at} {name} p{p}", got[f"p{p}"], nearest(vals, p))
        k = len(w["rolling"])
        for i, f in enumerate((0.1, 0.25, 0.5, 0.75, 1.0)):
            idx = max(0, min(int(k * f) - 1, k - 1))
            c = g["cumulative"][i]
            check(f"{at} Stat 4 point {i}", c["after_requests"], idx + 1)
            check(f"{at} Stat 4 rate {i}", c["token_hit_rate"],
                  w["rolling"][idx])
for b in bad[:20]:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF

# lct mrc --prefix at K keys, lct sim at K / R chunks (R keys a chunk)
# and lct replay --fill-on-miss on a mem:K backend count the same chunks
# hit.  lct gen lists a call's keys chunk by chunk, each chunk's object
# groups and ranks together, as LMCache's lookup module does
# (_chunk_major_object_keys), so the three agree on every shape: qwen
# (2 keys a chunk), request specs, llama (8 ranks x 3 groups: 24), llama
# with one rank (3), at whole chunks and, mrc and replay, between them.
# A fleet's mix has 2, 24 or 4 keys a chunk: no one chunk capacity for
# lct sim, so mrc and replay alone.
hits_mrc() { # hits_mrc FILE K: chunks hit by the curve at K keys
    "$lct" mrc --prefix --json "$1" | python3 -c '
import json, sys
m = json.load(sys.stdin)
p = [p for p in m["curve"] if p["keys"] == int(sys.argv[1])][0]
print(round(p["token_hit_ratio"] * m["positions"]))' "$2"
}
hits_sim() { # hits_sim FILE C: chunks hit by lct sim at C chunks
    "$lct" sim -q --json --capacity "$2" "$1" | python3 -c '
import json, sys
print(json.load(sys.stdin)["hit_chunks"])'
}
hits_replay() { # hits_replay FILE K: chunks loaded from a mem:K backend
    "$lct" replay -q --backend "mem:$2" --value-bytes 1K --speed 0 \
        --fill-on-miss --store-at reserve "$1" 2>&1 |
        sed -n 's/.*prefix rule: \([0-9]*\) of.*/\1/p'
}
# shape | keys a chunk | K values the curve prints (one whole chunks)
while IFS='|' read -r shape per keys; do
    # shellcheck disable=SC2086
    "$lct" gen -n 4000 --seed 7 $shape "$tmp/a.lct" > /dev/null ||
        say "gen $shape"
    for k in $keys; do
        m=$(hits_mrc "$tmp/a.lct" "$k")
        r=$(hits_replay "$tmp/a.lct" "$k")
        [ -n "$m" ] && [ "$m" = "$r" ] ||
            say "shape '$shape' at $k keys: mrc --prefix $m, replay $r"
        if [ "$per" -gt 0 ] && [ $((k % per)) -eq 0 ]; then
            s=$(hits_sim "$tmp/a.lct" $((k / per)))
            [ "$m" = "$s" ] ||
                say "shape '$shape' at $k keys: mrc --prefix $m, sim $s"
        fi
    done
    # Whole chunks the curve does not print: sim and replay alone.
    if [ "$per" -gt 2 ]; then
        for c in 1 10 42; do
            s=$(hits_sim "$tmp/a.lct" "$c")
            r=$(hits_replay "$tmp/a.lct" $((c * per)))
            [ -n "$s" ] && [ "$s" = "$r" ] ||
                say "shape '$shape' at $c chunks: sim $s, replay $r"
        done
    fi
done <<'SHAPES'
|2|8 45 128
--spec|2|8 45 128
--shape llama|24|45 128
--shape llama --kv-ranks 1|3|3 6 45 128
--mix|0|45 128
SHAPES

# lct gen writes keys as LMCache makes them (ipc_key_to_object_keys):
# whole chunks, a key per kv rank of each, the ranks sharing the hash;
# hashes of 32 distinct-looking bytes that depend on the model; --start
# sets t_wall; --per-rank-hashes gives the older keys back.
"$lct" gen -n 400 --seed 9 "$tmp/q.lct" > /dev/null || say "gen qwen"
"$lct" gen -n 400 --seed 9 --shape llama "$tmp/l.lct" > /dev/null ||
    say "gen llama"
"$lct" gen -n 400 --seed 9 --start 1800000000 "$tmp/s.lct" > /dev/null ||
    say "gen --start"
"$lct" gen -n 400 --seed 9 --per-rank-hashes "$tmp/p.lct" > /dev/null ||
    say "gen --per-rank-hashes"
for t in q l p; do
    "$lct" keys --csv "$tmp/$t.lct" > "$tmp/$t.csv" || say "keys $t"
done
"$lct" dump "$tmp/s.lct" | head -1 > "$tmp/s.json"
python3 - "$tmp" <<'EOF' || fail=1
import csv, json, sys
from collections import defaultdict
d = sys.argv[1]
bad = []
def calls(name):
    by = defaultdict(list)
    for row in csv.DictReader(open(f"{d}/{name}.csv")):
        by[row["idx"]].append(row)
    return by
qwen = set()
for name, ranks in (("q", 2), ("l", 8)):
    hashes = set()
    for idx, rows in calls(name).items():
        if len(rows) % ranks:
            bad.append(f"{name} call {idx}: {len(rows)} keys, not whole chunks")
        for c in range(0, len(rows), ranks):
            chunk = rows[c:c + ranks]
            if [int(r["kv_rank"]) for r in chunk] != list(range(ranks)):
                bad.append(f"{name} call {idx}: chunk {c // ranks} ranks")
            if len({r["chunk_hash"] for r in chunk}) != 1:
                bad.append(f"{name} call {idx}: ranks of a chunk differ")
            h = chunk[0]["chunk_hash"]
            if h[:16] * 4 == h:
                bad.append(f"{name}: hash {h} is 8 bytes repeated")
            hashes.add(h)
    if name == "q":
        qwen = hashes
    elif hashes & qwen:
        bad.append("llama's chunk hashes repeat qwen's")
t_wall = json.load(open(f"{d}/s.json"))["t_wall"]
if not 1800000000 <= t_wall < 1800000001:
    bad.append(f"--start: t_wall {t_wall}")
p = calls("p")
if not any(len({r["chunk_hash"] for r in rows}) == len(rows) > 1
           for rows in p.values()):
    bad.append("--per-rank-hashes: no call with a hash a key")
for b in bad[:10]:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF

[ $fail = 0 ] && echo "sim-lmcache: ok"
exit $fail
