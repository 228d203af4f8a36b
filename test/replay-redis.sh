#!/bin/sh
# lct replay against a real redis-server that this test starts on a
# loopback port of its own and stops: the hits equal the mem backend's,
# LMCache's report files are written, a server killed mid-run gives
# counted errors, reports and exit 1 (no hang), and an unreachable server
# fails at once, naming the address.  Skipped (77) without redis-server.
set -u
command -v redis-server >/dev/null 2>&1 || { echo "no redis-server: skipped"; exit 77; }
lct="$LCT_BUILDDIR/tools/lct"
sample="$LCT_SRCDIR/examples/sample.lct"
tmp=$(mktemp -d)
port=$((20000 + $$ % 20000))
pid=
# a server the test stopped (SIGSTOP) takes no SIGTERM until continued
cleanup() {
    [ -n "$pid" ] && { kill -CONT "$pid"; kill "$pid"; } 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "replay-redis: $*"; exit 1; }

start_redis() {
    redis-server --port "$port" --bind 127.0.0.1 --save '' \
        --appendonly no --daemonize no >"$tmp/redis.log" 2>&1 &
    pid=$!
    i=0
    until redis-cli -p "$port" ping >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 100 ] || fail "redis-server did not start: $(cat "$tmp/redis.log")"
        sleep 0.05
    done
}

start_redis
"$lct" replay -q --speed 0 -c 4 --pipeline 8 --value-bytes 4096 \
    --backend "redis://127.0.0.1:$port" --output-dir "$tmp/out" \
    --json "$sample" >"$tmp/redis.json" || fail "redis replay failed"
"$lct" replay -q --speed 0 --value-bytes 4096 --backend mem:1000000 \
    --json "$sample" >"$tmp/mem.json" || fail "mem replay failed"
hits() { sed -n 's/^  "hits": \([0-9]*\),$/\1/p' "$1"; }
[ -n "$(hits "$tmp/redis.json")" ] || fail "no hits in $(cat "$tmp/redis.json")"
[ "$(hits "$tmp/redis.json")" = "$(hits "$tmp/mem.json")" ] ||
    fail "redis hits $(hits "$tmp/redis.json") != mem hits $(hits "$tmp/mem.json")"
# Two workers on threads, each pipelining over two connections: causal
# waits keep every lookup after its store, so the hits are the same.
"$lct" replay -q --speed 0 --workers 2 --connections 2 --pipeline 8 \
    --value-bytes 4096 --backend "redis://127.0.0.1:$port" --json "$sample" \
    >"$tmp/threads.json" || fail "threaded redis replay failed"
[ "$(hits "$tmp/threads.json")" = "$(hits "$tmp/mem.json")" ] ||
    fail "2 workers: hits $(hits "$tmp/threads.json") != mem's $(hits "$tmp/mem.json")"
# The banner names operations (handed to the backend) and commands (on
# the wire) apart.
"$lct" replay -q --speed 0 --connections 2 --pipeline 8 --value-bytes 4096 \
    --backend "redis://127.0.0.1:$port" "$sample" | head -n 1 |
    grep -q 'operations outstanding [0-9]*, 1 worker; commands on the wire at most 8 a connection, 2 connections a worker$' ||
    fail "the banner does not tell operations from commands"
# One worker, four connections with 16 commands outstanding on each (the
# connections answer independently): the same hits.
"$lct" replay -q --speed 0 --connections 4 --pipeline 16 \
    --value-bytes 4096 --backend "redis://127.0.0.1:$port" --json "$sample" \
    >"$tmp/conns.json" || fail "4-connection redis replay failed"
[ "$(hits "$tmp/conns.json")" = "$(hits "$tmp/mem.json")" ] ||
    fail "4 connections: hits $(hits "$tmp/conns.json") != mem's $(hits "$tmp/mem.json")"
# LMCache's files: its CSV header (Python's csv writes CR LF) and JSON keys.
printf 'qualname,count,errors,mean_ms,p50_ms,p90_ms,p99_ms,min_ms,max_ms\r\n' >"$tmp/want"
head -n 1 "$tmp/out/trace_replay_ops.csv" | cmp -s - "$tmp/want" ||
    fail "ops CSV header: $(head -n 1 "$tmp/out/trace_replay_ops.csv" | od -c | head -3)"
grep -q '^lookup,2765,0,' "$tmp/out/trace_replay_ops.csv" ||
    fail "no lookup row: $(cat "$tmp/out/trace_replay_ops.csv")"
grep -q '"duration_s": ' "$tmp/out/trace_replay_summary.json" &&
    grep -q '"ops": {' "$tmp/out/trace_replay_summary.json" ||
    fail "summary JSON lacks LMCache's keys"
[ "$(redis-cli -p "$port" dbsize)" -gt 0 ] || fail "nothing stored in redis"
# A run starts on an empty store (earlier lct:* keys removed; other keys
# kept) unless --keep, which starts warm.
redis-cli -p "$port" set other-key 1 >/dev/null
"$lct" replay -q --speed 0 --value-bytes 4096 --backend "redis://127.0.0.1:$port" \
    --json "$sample" >"$tmp/again.json" || fail "second redis replay failed"
[ "$(hits "$tmp/again.json")" = "$(hits "$tmp/mem.json")" ] ||
    fail "a second run did not start fresh: $(hits "$tmp/again.json") hits"
"$lct" replay -q --speed 0 --value-bytes 4096 --backend "redis://127.0.0.1:$port" \
    --keep --json "$sample" >"$tmp/warm.json" || fail "--keep replay failed"
[ "$(hits "$tmp/warm.json")" -gt "$(hits "$tmp/mem.json")" ] ||
    fail "--keep did not start warm"
[ "$(redis-cli -p "$port" get other-key)" = 1 ] || fail "another key was removed"

# Full (maxmemory, noeviction): SETs answered with an error reply are
# counted by kind with redis's words, the run goes on, exit 1.
redis-cli -p "$port" flushall >/dev/null
redis-cli -p "$port" config set maxmemory 3mb >/dev/null
redis-cli -p "$port" config set maxmemory-policy noeviction >/dev/null
"$lct" replay --speed 0 --value-bytes 64K --max-errors 0 \
    --backend "redis://127.0.0.1:$port" "$sample" >"$tmp/full.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "a full redis: exit $rc, want 1"
grep -q '^errors: storage backend failed [0-9]* (first: .*OOM' "$tmp/full.txt" ||
    fail "OOM replies not counted: $(cat "$tmp/full.txt")"
grep -q '^store .* [1-9][0-9]* ' "$tmp/full.txt" || fail "no store row"
redis-cli -p "$port" config set maxmemory 0 >/dev/null
redis-cli -p "$port" flushall >/dev/null

# A server that stops answering (SIGSTOP; connections still accepted):
# told at the start, within --timeout; no hang.
kill -STOP "$pid"
start=$(date +%s)
"$lct" replay -q --speed 0 --timeout 0.5 --keep --value-bytes 4096 \
    --backend "redis://127.0.0.1:$port" "$sample" >"$tmp/stopped.txt" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
kill -CONT "$pid"
[ $rc -eq 1 ] || fail "a silent server: exit $rc, want 1: $(cat "$tmp/stopped.txt")"
grep -q "PING: no answer within --timeout (0.5 s)" "$tmp/stopped.txt" ||
    fail "a silent server not said: $(cat "$tmp/stopped.txt")"
[ $took -le 5 ] || fail "a silent server took ${took}s"
redis-cli -p "$port" flushall >/dev/null

# Killed mid-run: errors counted, reports written, exit 1, no hang.
"$lct" replay -q --speed 1 --value-bytes 4096 --max-errors 0 \
    --backend "redis://127.0.0.1:$port" --output-dir "$tmp/killed" \
    "$sample" >"$tmp/killed.txt" 2>&1 &
replay=$!
sleep 1
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=
i=0
while kill -0 "$replay" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 200 ] || { kill "$replay"; fail "replay hung after redis died"; }
    sleep 0.1
done
wait "$replay"
rc=$?
[ $rc -eq 1 ] || fail "exit $rc after redis died, want 1: $(cat "$tmp/killed.txt")"
grep -q '^errors: E' "$tmp/killed.txt" || fail "errors not counted by kind: $(cat "$tmp/killed.txt")"
grep -q '"errors_by_kind": {' "$tmp/killed/trace_replay_summary.json" ||
    fail "no summary after redis died"

# A server whose SCAN cursor never comes back to 0: the clean-up of an
# earlier run's keys gives up in bounded pages, says so, exit 1.  One
# that pages slowly for ever is given up on SIGTERM.
fake() { # fake MODE: a misbehaving server on $port
    # the last fake's "ready" must not be read before this one's truncation
    rm -f "$tmp/fake.out"
    ${PYTHON:-python3} "$LCT_SRCDIR/test/support/fake_redis.py" "$port" "$1" \
        >"$tmp/fake.out" 2>&1 &
    pid=$!
    i=0
    until grep -q ready "$tmp/fake.out" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 100 ] || fail "fake server did not start: $(cat "$tmp/fake.out")"
        sleep 0.05
    done
}
fake endless
start=$(date +%s)
timeout 60 "$lct" replay -q --speed 0 --backend "redis://127.0.0.1:$port" \
    "$sample" >"$tmp/endless.txt" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
[ $rc -eq 1 ] || fail "endless SCAN: exit $rc, want 1: $(cat "$tmp/endless.txt")"
grep -q "SCAN's cursor did not come back to 0 in 1024 pages.*--keep" "$tmp/endless.txt" ||
    fail "endless SCAN not said: $(cat "$tmp/endless.txt")"
[ $took -le 30 ] || fail "endless SCAN took ${took}s"
kill "$pid"; wait "$pid" 2>/dev/null; pid=
fake slow
"$lct" replay -q --speed 0 --backend "redis://127.0.0.1:$port" \
    "$sample" >"$tmp/slow.txt" 2>&1 &
replay=$!
sleep 1
kill -TERM "$replay"
i=0
while kill -0 "$replay" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 50 ] || { kill -9 "$replay"; fail "slow SCAN ignored SIGTERM"; }
    sleep 0.1
done
wait "$replay"
rc=$?
[ $rc -eq 1 ] || fail "slow SCAN interrupted: exit $rc: $(cat "$tmp/slow.txt")"
grep -q "interrupted while removing an earlier run's lct:\* keys (0 removed" "$tmp/slow.txt" ||
    fail "interrupted clean-up not said: $(cat "$tmp/slow.txt")"
kill "$pid"; wait "$pid" 2>/dev/null; pid=

# One that answers PING, then no command (the mute fake): each pipeline
# gives up after --timeout, its commands counted as timed out, and
# --max-errors ends the run; no hang.
fake mute
start=$(date +%s)
"$lct" replay -q --speed 0 --connections 2 --pipeline 4 --timeout 0.5 \
    --max-errors 8 --keep --value-bytes 4096 \
    --backend "redis://127.0.0.1:$port" "$sample" >"$tmp/mute.txt" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
[ $rc -eq 1 ] || fail "a mute server: exit $rc, want 1: $(cat "$tmp/mute.txt")"
grep -q '^errors: ETIMEDOUT' "$tmp/mute.txt" ||
    fail "timeouts not counted: $(cat "$tmp/mute.txt")"
# the commands after a timeout, on the connection it lost, say why
! grep -q '^errors: EIO' "$tmp/mute.txt" ||
    fail "a lost connection's later commands counted as EIO: $(cat "$tmp/mute.txt")"
[ $took -le 10 ] || fail "a mute server took ${took}s"
kill "$pid"; wait "$pid" 2>/dev/null; pid=

# A server stopped (SIGSTOP) mid-run answers nothing: every operation
# times out.  With --stall 2 the run ends on its own, its reports
# written and marked stalled; with --stall 0 it goes on failing, says its
# error count on stderr every 10 s (a file here, not a terminal), and
# SIGTERM ends it within one --timeout and a second.  The sample paced
# at a tenth of its speed lasts 30 s.
until_gone() { # PID TENTHS WHAT: fail if PID still runs after TENTHS/10 s
    i=0
    while kill -0 "$1" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le "$2" ] || { kill -9 "$1"; kill -CONT "$pid"; fail "$3"; }
        sleep 0.1
    done
}
# stalled NAME SUMMARY SAID REPLAY-ARGS...: a replay whose server is
# stopped a second in ends on --stall 2 with exit 1, says why, and its
# report file (SUMMARY under $tmp/NAME) contains SAID.
stalled() {
    name=$1 summary=$2 said=$3
    shift 3
    "$lct" replay --timeout 1 --stall 2 --value-bytes 4096 \
        --backend "redis://127.0.0.1:$port" --output-dir "$tmp/$name" \
        "$@" >"$tmp/$name.txt" 2>&1 &
    replay=$!
    sleep 1
    kill -STOP "$pid"
    until_gone "$replay" 100 "$name, a stopped server: --stall 2 did not end the run"
    wait "$replay"
    rc=$?
    [ $rc -eq 1 ] || fail "$name: exit $rc, want 1: $(cat "$tmp/$name.txt")"
    grep -q '^PARTIAL: the backend answered nothing for --stall seconds' \
        "$tmp/$name.txt" || fail "$name: the stall not said: $(cat "$tmp/$name.txt")"
    grep -q "$said" "$tmp/$name/$summary" ||
        fail "$name: $summary does not say stalled"
    kill -CONT "$pid"
}
# interrupted NAME REPLAY-ARGS...: with --stall 0 --max-errors 0 only the
# interrupt ends it (on a loaded machine the timeouts once passed the
# default 1000 errors within the 11 s): its error count is on stderr
# within 11 s of the server's stop, and SIGTERM ends it within 2 s.
interrupted() {
    name=$1
    shift
    "$lct" replay --timeout 1 --stall 0 --max-errors 0 --value-bytes 4096 \
        --backend "redis://127.0.0.1:$port" \
        "$@" >"$tmp/$name.txt" 2>"$tmp/$name.err" &
    replay=$!
    sleep 1
    kill -STOP "$pid"
    sleep 11
    grep -q '^lct replay: [0-9]* operations failed so far$' "$tmp/$name.err" ||
        { kill -9 "$replay"; kill -CONT "$pid"; fail "$name: no error count in 11 s: $(cat "$tmp/$name.err")"; }
    kill -TERM "$replay"
    until_gone "$replay" 20 "$name, SIGTERM with the server stopped: not ended in 2 s"
    wait "$replay"
    grep -q '^PARTIAL: interrupted' "$tmp/$name.txt" ||
        fail "$name: interrupted run not said: $(cat "$tmp/$name.txt")"
}
start_redis
stalled stalled trace_replay_summary.json '"stalled": true' --speed 0.1 \
    "$sample"
interrupted stopped --speed 0.1 --connections 2 --pipeline 4 "$sample"
kill -CONT "$pid"; kill "$pid"; wait "$pid" 2>/dev/null; pid=

# An L2-level trace alike (3,000 records over 0.8 s, paced at a fiftieth:
# 40 s), with l2_replay_stats.json for its report.
"$lct" gen --level l2 -n 3000 --seed 5 "$tmp/l2long.lct" >/dev/null ||
    fail "gen --level l2"
start_redis
stalled l2stalled l2_replay_stats.json '"stalled":true' --speed 0.02 \
    "$tmp/l2long.lct"
interrupted l2stopped --speed 0.02 "$tmp/l2long.lct"
kill -CONT "$pid"; kill "$pid"; wait "$pid" 2>/dev/null; pid=

# Not redis at all (an HTTP server): told so at the start, exit 1.
fake http
"$lct" replay -q --speed 0 --backend "redis://127.0.0.1:$port" "$sample" \
    >"$tmp/http.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "an HTTP server: exit $rc, want 1: $(cat "$tmp/http.txt")"
grep -q "redis://127.0.0.1:$port: PING: .*is this a redis server?" "$tmp/http.txt" ||
    fail "an HTTP server not told apart: $(cat "$tmp/http.txt")"
kill "$pid"; wait "$pid" 2>/dev/null; pid=

# AUTH and a database: a server with a password refuses a URI without
# one (with the hint) or with a wrong one; with it, the keys land in the
# database the URI names; an ACL user works the same; the password is
# shown as *** in the banner and the summary, never in a message.
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --requirepass sekret --daemonize no >"$tmp/redis.log" 2>&1 &
pid=$!
i=0
until redis-cli -p "$port" -a sekret --no-auth-warning ping >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 100 ] || fail "redis-server with a password did not start"
    sleep 0.05
done
rcli() { redis-cli -p "$port" -a sekret --no-auth-warning "$@"; }
"$lct" replay -q --speed 0 --value-bytes 1K \
    --backend "redis://127.0.0.1:$port" "$sample" >"$tmp/noauth.txt" 2>&1
[ $? -eq 1 ] && grep -q 'wants a password: give redis://:PASSWORD@' "$tmp/noauth.txt" ||
    fail "no password: $(cat "$tmp/noauth.txt")"
"$lct" replay -q --speed 0 --value-bytes 1K \
    --backend "redis://:wrong@127.0.0.1:$port" "$sample" >"$tmp/wrong.txt" 2>&1
[ $? -eq 1 ] && grep -q 'AUTH: WRONGPASS' "$tmp/wrong.txt" ||
    fail "a wrong password: $(cat "$tmp/wrong.txt")"
! grep -q wrong "$tmp/wrong.txt" || fail "the password was shown"
"$lct" replay --speed 0 --value-bytes 1K --json \
    --backend "redis://:sekret@127.0.0.1:$port/3" "$sample" >"$tmp/auth.json" \
    2>"$tmp/auth.err" || fail "AUTH + SELECT 3: $(cat "$tmp/auth.err")"
[ "$(hits "$tmp/auth.json")" = "$(hits "$tmp/mem.json")" ] ||
    fail "AUTH: hits $(hits "$tmp/auth.json") != mem's $(hits "$tmp/mem.json")"
grep -q "\"backend\": \"redis://:\*\*\*@127.0.0.1:$port/3\"" "$tmp/auth.json" ||
    fail "the summary's backend: $(grep backend "$tmp/auth.json")"
! grep -q sekret "$tmp/auth.json" "$tmp/auth.err" || fail "the password was shown"
[ "$(rcli -n 3 dbsize)" -gt 0 ] && [ "$(rcli -n 0 dbsize)" -eq 0 ] ||
    fail "keys not in database 3: db3 $(rcli -n 3 dbsize), db0 $(rcli -n 0 dbsize)"
rcli ACL SETUSER bench on '>benchpw' '~lct:*' '+@all' >/dev/null
"$lct" replay -q --speed 0 --value-bytes 1K --json \
    --backend "redis://bench:benchpw@127.0.0.1:$port" "$sample" \
    >"$tmp/acl.json" || fail "ACL user"
[ "$(hits "$tmp/acl.json")" = "$(hits "$tmp/mem.json")" ] || fail "ACL user's hits"
"$lct" replay -q --speed 0 --value-bytes 1K \
    --backend "redis://:sekret@127.0.0.1:$port/99" "$sample" >"$tmp/db.txt" 2>&1
[ $? -eq 1 ] && grep -q 'SELECT 99: ERR' "$tmp/db.txt" ||
    fail "database 99: $(cat "$tmp/db.txt")"
kill "$pid"; wait "$pid" 2>/dev/null; pid=

# An L2-level trace against redis: with one task in flight every outcome
# is the source's, as on mem:, and l2_replay_stats.json is written.
start_redis
l2="$LCT_SRCDIR/examples/l2-sample.lct"
for backend in "redis://127.0.0.1:$port" mem:100000; do
    "$lct" replay -q --speed 0 -c 1 --value-bytes 4096 --adapter 0 \
        --backend "$backend" --output-dir "$tmp/l2" "$l2" >"$tmp/l2.txt" ||
        fail "L2 replay on $backend: $(cat "$tmp/l2.txt")"
    grep -q '^outcomes: 121 compared with the source .*: 0 differ$' \
        "$tmp/l2.txt" || fail "L2 outcomes on $backend: $(cat "$tmp/l2.txt")"
    grep -q '"outcome_matches_source":true' "$tmp/l2/l2_replay_stats.json" ||
        fail "l2_replay_stats.json on $backend"
done
# a task's keys as one pipeline over two connections: the same outcomes
"$lct" replay -q --speed 0 -c 1 --pipeline 8 --connections 2 \
    --value-bytes 4096 --adapter 0 --backend "redis://127.0.0.1:$port" \
    "$l2" >"$tmp/l2p.txt" || fail "pipelined L2 replay: $(cat "$tmp/l2p.txt")"
grep -q '^outcomes: 121 compared with the source .*: 0 differ$' \
    "$tmp/l2p.txt" || fail "pipelined L2 outcomes: $(cat "$tmp/l2p.txt")"
kill "$pid"; wait "$pid" 2>/dev/null; pid=

# Unreachable: fails at the start within seconds, naming the address.
start=$(date +%s)
"$lct" replay -q --speed 0 --backend "redis://127.0.0.1:$port" "$sample" \
    >"$tmp/none.txt" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
[ $rc -eq 1 ] || fail "unreachable: exit $rc"
grep -q "127.0.0.1:$port" "$tmp/none.txt" || fail "address not named: $(cat "$tmp/none.txt")"
[ $took -le 5 ] || fail "unreachable took ${took}s"
echo "replay-redis: hits match mem, LMCache's files written, AUTH (password, ACL user) and a database, a killed server, one that is not redis and an unreachable one end cleanly; an L2 trace replays with the source's outcomes"
