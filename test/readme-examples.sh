#!/bin/sh
# The README's examples, run and compared (test/readme-examples.py).
exec python3 "$LCT_SRCDIR/test/readme-examples.py" "$LCT_SRCDIR" "$LCT_BUILDDIR"
