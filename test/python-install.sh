#!/bin/sh
# The Python module's documented install (docs/python.md, "Install"), run
# as written in every interpreter here: Debian's /usr/bin/python3 and the
# first python3 on PATH when that is another (pyenv's, which has pip but
# no `wheel`).  Each gets a scratch virtual environment,
#     python3 -m venv --system-site-packages ENV
#     ENV/bin/python -m pip install ./python
# with no package index (pip's isolated build needs nothing: the backend
# is python/build_lct.py, the standard library alone); then the module is
# imported from outside the source tree and must be the venv's copy and
# read the sample.  Also: importing lct from inside python/ with nothing
# built says what to do, and Debian's python3 refuses a system-wide
# install (PEP 668), which is why the docs lead with a venv.
set -u
src=$LCT_SRCDIR
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0
interpreters=/usr/bin/python3
other=$(command -v python3 || true)
if [ -n "$other" ] && [ "$(readlink -f "$other")" != "$(readlink -f /usr/bin/python3)" ]; then
    interpreters="$interpreters $other"
fi
n=0
for py in $interpreters; do
    n=$((n + 1))
    env="$scratch/env$n"
    if ! "$py" -m venv --system-site-packages "$env" > "$scratch/venv$n.log" 2>&1; then
        echo "FAIL $py: python3 -m venv --system-site-packages"
        cat "$scratch/venv$n.log"
        fail=1
        continue
    fi
    # pip must not reach for an index: point it nowhere.
    if ! (cd "$src" && PIP_INDEX_URL=http://127.0.0.1:9/ PIP_NO_INPUT=1 \
              "$env/bin/python" -m pip install --quiet ./python) \
            > "$scratch/pip$n.log" 2>&1; then
        echo "FAIL $py: pip install ./python"
        tail -n 30 "$scratch/pip$n.log"
        fail=1
        continue
    fi
    got=$(cd "$scratch" && "$env/bin/python" -c '
import sys, lct
assert lct.__file__.startswith(sys.prefix), (lct.__file__, sys.prefix)
with lct.TraceReader(sys.argv[1]) as r:
    n = sum(1 for _ in r.records())
print(lct.__version__, n)' "$src/examples/sample.lct" 2>&1)
    want="$(sed -n 's/^#define LCT_VERSION_STRING "\(.*\)"$/\1/p' "$src/include/lct_core.h") 3000"
    if [ "$got" = "$want" ]; then
        echo "PASS $py: venv, pip install ./python, import from outside: $got"
    else
        echo "FAIL $py: import from outside the tree gave: $got (want $want)"
        fail=1
    fi
done
# PEP 668: Debian's interpreter refuses a system-wide install.
if (cd "$src" && PIP_INDEX_URL=http://127.0.0.1:9/ /usr/bin/python3 -m pip \
        install --dry-run ./python) > "$scratch/pep668.log" 2>&1; then
    echo "NOTE /usr/bin/python3 allows a system-wide pip install here"
elif grep -q externally-managed "$scratch/pep668.log"; then
    echo "PASS /usr/bin/python3 refuses a system-wide install (PEP 668)"
fi
# From inside python/ with nothing built: a message that says what to do.
msg=$(cd "$src/python" && /usr/bin/python3 -c 'import lct' 2>&1)
case $msg in
*"is not built"*) echo "PASS import lct inside python/ unbuilt: says so" ;;
*) echo "FAIL import lct inside python/ unbuilt said: $msg"; fail=1 ;;
esac

# `make python` adds LCT_PY_CFLAGS and LCT_PY_LDFLAGS from the environment
# (a sanitizer build of the module by hand, docs/testing.md): a define
# they carry must reach the compiler, which an #error on it shows.
probe="$scratch/probe.h"
echo '#ifdef LCT_PY_FLAGS_REACHED
#error LCT_PY_CFLAGS reached the compiler
#endif' > "$probe"
if LCT_PY_CFLAGS="-DLCT_PY_FLAGS_REACHED -include $probe" \
        LCT_PY_BUILD="$scratch/flags" PYTHON=/usr/bin/python3 \
        make -s -C "$LCT_BUILDDIR" python > "$scratch/flags.log" 2>&1; then
    echo "FAIL make python ignored LCT_PY_CFLAGS"; fail=1
elif grep -q "LCT_PY_CFLAGS reached the compiler" "$scratch/flags.log"; then
    echo "PASS make python: LCT_PY_CFLAGS reaches the compiler"
else
    echo "FAIL make python with LCT_PY_CFLAGS failed otherwise:"
    tail -n 20 "$scratch/flags.log"; fail=1
fi
exit $fail
