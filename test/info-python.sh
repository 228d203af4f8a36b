#!/bin/sh
# lct info's level_meta rows against Python's own str() of the same values
# (test/info_python.py), in Debian's /usr/bin/python3 with python3-msgpack,
# which scripts/test installs.
set -eu
py=/usr/bin/python3
if ! "$py" -c 'import msgpack' 2>/dev/null; then
    echo "need $py with msgpack (Debian package python3-msgpack)"
    exit 1
fi
exec "$py" "$LCT_SRCDIR/test/info_python.py" "$LCT_BUILDDIR/tools/lct"
