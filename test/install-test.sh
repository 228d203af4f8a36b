#!/usr/bin/env bash
# Install liblct into a scratch root, build examples/count.c against the
# installed copy through pkg-config --static, run it, then uninstall and
# check nothing is left.  Usage: test/install-test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

make -C "$build" install DESTDIR="$root" >/dev/null
prefix=$(sed -n 's/^prefix=//p' "$build/lct.pc")
# The installed lct.pc, pointed at where DESTDIR put it; libbsd's own .pc
# is found where the system keeps it.
mkdir -p "$root/pc"
sed "s|^prefix=.*|prefix=$root$prefix|" "$root$prefix/lib/pkgconfig/lct.pc" \
    > "$root/pc/lct.pc"
export PKG_CONFIG_PATH="$root/pc"

for f in bin/lct include/lct.h lib/liblct.a lib/pkgconfig/lct.pc \
         share/man/man1/lct.1 share/man/man3/lct.3; do
    [ -f "$root$prefix/$f" ] || { echo "install-test: $f not installed"; exit 1; }
done

flags=$(pkg-config --static --cflags --libs lct)
echo "install-test: cc count.c $flags"
cc -std=c11 -Wall -Wextra -Werror "$src/examples/count.c" -o "$root/count" $flags
out=$("$root/count" "$src/examples/sample.lct")
grep -q "3000  records (0 skipped)" <<<"$out" || {
    echo "install-test: unexpected output:"; echo "$out"; exit 1; }
"$root$prefix/bin/lct" --version >/dev/null

make -C "$build" uninstall DESTDIR="$root" >/dev/null
left=$(find "$root$prefix" -type f | wc -l)
[ "$left" -eq 0 ] || { echo "install-test: uninstall left $left files"; exit 1; }
echo "install-test: ok"
