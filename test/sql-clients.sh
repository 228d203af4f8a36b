#!/bin/sh
# The loadable extension in the sqlite3 shell and in Python's sqlite3
# module (test/sql_clients.py).  Python is Debian's /usr/bin/python3: a
# python3 earlier on PATH (pyenv, conda) may be built without
# enable_load_extension.  Both clients are required: scripts/test installs
# them.
set -eu
ext="$LCT_BUILDDIR/lib/lct_sqlite"
py=/usr/bin/python3
if ! "$py" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension' 2>/dev/null; then
    echo "need $py with sqlite3 extension loading (Debian package python3)"
    exit 1
fi
command -v sqlite3 >/dev/null || { echo "need the sqlite3 shell (package sqlite3)"; exit 1; }
# In the sanitizer build the extension needs the sanitizer runtimes loaded
# first; the clients' own leaks are not ours.
# gcc links its runtimes into the extension; clang leaves them to the
# program (its ASan runtime carries UBSan's handlers too).
if ldd "$ext.so" | grep -q libasan; then
    LD_PRELOAD="$(${CC:-gcc} -print-file-name=libasan.so) $(${CC:-gcc} -print-file-name=libubsan.so)"
    ASAN_OPTIONS=detect_leaks=0
    export LD_PRELOAD ASAN_OPTIONS
elif nm -D "$ext.so" | grep -q ' U __asan_'; then
    LD_PRELOAD="$(${CC:-clang} -print-file-name=libclang_rt.asan-x86_64.so)"
    ASAN_OPTIONS=detect_leaks=0
    export LD_PRELOAD ASAN_OPTIONS
fi
exec "$py" "$LCT_SRCDIR/test/sql_clients.py" "$ext" "$LCT_SRCDIR/test/fixtures" \
    "$LCT_SRCDIR/examples/sample.lct" "$LCT_BUILDDIR/tools/lct"
