#!/bin/sh
# The Python module (python/): built for $PYTHON with this build's
# sanitizer flags into $LCT_BUILDDIR/python-build, then its tests: the
# drop-in against every fixture, the tables against the lct tool, the
# drop-in against LMCache's reader.py on damaged traces, and hostile
# input.  A sanitized module runs with the compiler's ASan and UBSan
# runtimes preloaded into the interpreter (gcc's; under clang the tests
# are skipped, status 77).
set -eu
py=${PYTHON:-python3}
out="${LCT_PY_BUILD:-$LCT_BUILDDIR/python-build}"
mkdir -p "$out"
if ! LCT_PY_CFLAGS="${LCT_SAN_CFLAGS:-}" LCT_PY_LDFLAGS="${LCT_SAN_LDFLAGS:-}" \
      "$py" "$LCT_SRCDIR/python/build_lct.py" --build-lib "$out/lib" \
      --build-temp "$out/tmp" > "$out/build.log" 2>&1; then
    cat "$out/build.log"
    exit 1
fi
preload=""
if [ -n "${LCT_SAN_CFLAGS:-}" ]; then
    asan=$(${CC:-cc} -print-file-name=libasan.so)
    ubsan=$(${CC:-cc} -print-file-name=libubsan.so)
    case $asan in /*) ;; *) echo "no libasan.so to preload (${CC:-cc})"; exit 77 ;; esac
    preload="$asan:$ubsan"
fi
status=0
for t in test_dropin test_tables test_pandas test_reference test_hostile test_caches test_threads test_dask test_docs; do
    echo "== $t ($py)"
    log="$out/$t.log"
    LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 \
        LCT_TOOL="$LCT_BUILDDIR/tools/lct" PYTHONPATH="$out/lib" \
        "$py" "$LCT_SRCDIR/python/tests/$t.py" > "$log" 2>&1 || status=1
    grep -v '^TraceReader: ' "$log" || true
done
exit $status
