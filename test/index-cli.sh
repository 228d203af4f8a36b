#!/bin/sh
# lct index and the commands that use its sidecar: dump --range and --at,
# and SQL, print the same bytes, warnings and exit status with a sidecar
# as without, on the sample and on damaged traces; a stale sidecar is
# said and written again by the command that found it, and a trace that
# grew has its sidecar extended; a read never makes one where there was
# none.
set -u
lct="$LCT_BUILDDIR/tools/lct"
fixtures="$LCT_SRCDIR/test/fixtures"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "index-cli: $*"; exit 1; }

cp "$LCT_SRCDIR/examples/sample.lct" "$tmp/sample.lct"
cp "$fixtures/malformed_mixed.lct" "$tmp/mixed.lct"
cp "$fixtures/trunc_tail_74.lct" "$tmp/cut.lct"

# run NAME ARGS...: stdout, stderr and status of lct ARGS into $tmp/NAME.*
run() {
    name=$1
    shift
    "$lct" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    echo $? >"$tmp/$name.rc"
}
same() { # same A B: the two runs printed and exited alike
    for x in out err rc; do
        cmp -s "$tmp/$1.$x" "$tmp/$2.$x" ||
            fail "$3: $x differs with a sidecar: $(diff "$tmp/$1.$x" "$tmp/$2.$x" | head -5)"
    done
}

cases() { # the commands compared, for trace $1
    echo "dump --range 0:3 $1"
    echo "dump --range 5:9 --fields idx,offset,qualname $1"
    echo "dump --range 2:4 --mmap $1"
    echo "dump --range -3: --fields idx,t_wall $1"
    echo "dump --range 100:103 $1"
    echo "dump --range :-20 -n 4 $1"
    echo "sql --csv SELECT idx,offset,qualname,length(args) FROM records WHERE idx BETWEEN 1 AND 4 $1"
}
run_cases() { # run_cases PREFIX TRACE: every case, as PREFIX1, PREFIX2...
    i=0
    while read -r line; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        case $line in
        sql*) q=$(echo "$line" | sed 's/^sql --csv //; s/ [^ ]*$//')
              run "$1$i" sql --csv "$q" "$2" ;;
        *) run "$1$i" $line ;;
        esac
    done <"$tmp/cases"
}
for t in sample mixed cut; do
    trace="$tmp/$t.lct"
    rm -f "$trace.lcti"
    cases "$trace" >"$tmp/cases"
    run_cases a "$trace"
    "$lct" index "$trace" >"$tmp/index.out" 2>/dev/null
    rc=$?
    [ -f "$trace.lcti" ] || fail "$t: no sidecar written"
    case $t in sample) want=0 ;; *) want=3 ;; esac
    [ $rc = $want ] || fail "$t: lct index exit $rc, want $want"
    run_cases b "$trace"
    i=0
    while read -r line; do
        i=$((i + 1))
        same "a$i" "b$i" "$t: $line"
    done <"$tmp/cases"
done

# --at's record number from the sidecar
off=$("$lct" dump --range 7:8 --fields offset "$tmp/sample.lct" |
      sed 's/[^0-9]//g')
got=$("$lct" dump --at "$off" --fields idx "$tmp/sample.lct")
[ "$got" = '{"idx":7}' ] || fail "--at $off: $got"

# up to date; then a trace that grew: extended
"$lct" index "$tmp/sample.lct" | grep -q "up to date" ||
    fail "a second index should find the sidecar up to date"
python3 -c 'import sys
p = sys.argv[1]
d = open(p, "rb").read()
off = 4 + int.from_bytes(d[:4], "big")          # the first record frame
n = 4 + int.from_bytes(d[off:off + 4], "big")
open(p, "ab").write(d[off:off + n])              # appended again: valid' \
    "$tmp/sample.lct"
"$lct" dump --range -1: --fields idx "$tmp/sample.lct" >"$tmp/last" ||
    fail "dump of a grown trace"
[ "$(cat "$tmp/last")" = '{"idx":3000}' ] ||
    fail "a grown trace's last record: $(cat "$tmp/last")"
# ... and the dump extended its sidecar, as lct index would have
"$lct" index "$tmp/sample.lct" | grep -q "3001 records, sidecar up to date" ||
    fail "the grown trace's sidecar was not extended by dump"
"$lct" index "$tmp/sample.lct" >/dev/null

# stale: the trace rewritten in place
printf 'XXXX' | dd of="$tmp/cut.lct" bs=1 seek=400 conv=notrunc 2>/dev/null
"$lct" dump --range -1: "$tmp/cut.lct" >/dev/null 2>"$tmp/err"
grep -q "is stale.*; writing it again" "$tmp/err" ||
    fail "a stale sidecar was not said: $(cat "$tmp/err")"
"$lct" index "$tmp/cut.lct" | grep -q "sidecar up to date" ||
    fail "the stale sidecar was not written again by dump"
"$lct" dump --range -1: "$tmp/cut.lct" >/dev/null 2>"$tmp/err"
! grep -q "is stale" "$tmp/err" ||
    fail "the rebuilt sidecar is still called stale"
# no sidecar: none is made by a read
rm -f "$tmp/cut.lct.lcti"
"$lct" dump --range -1: "$tmp/cut.lct" >/dev/null 2>&1
[ ! -e "$tmp/cut.lct.lcti" ] || fail "a dump made a sidecar where there was none"

# a file at the sidecar's name that is not one: left alone
echo notes >"$tmp/mixed.lct.lcti"
"$lct" index "$tmp/mixed.lct" >/dev/null 2>"$tmp/err"
[ $? = 1 ] || fail "index over a foreign .lcti should fail"
[ "$(cat "$tmp/mixed.lct.lcti")" = notes ] || fail "a foreign .lcti was replaced"
# a control byte in the trace's name: the library escapes it once in
# its message (ESC as \033), and the tool prints that as it is (it was
# escaped again, as \\033)
esc=$(printf '%s/x\033y.lct' "$tmp")
cp "$tmp/sample.lct" "$esc"
"$lct" index -q "$esc" || fail "index of a name with ESC"
printf junk >>"$esc.lcti"
"$lct" dump --range -1: "$esc" >/dev/null 2>"$tmp/err"
grep -q 'x\\033y.lct.lcti is damaged' "$tmp/err" ||
    fail "ESC not escaped once in the sidecar warning: $(cat "$tmp/err")"
! grep -q 'x\\\\033' "$tmp/err" ||
    fail "ESC escaped twice in the sidecar warning: $(cat "$tmp/err")"
exit 0
