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
for pc in lct lct_sqlite; do
    sed "s|^prefix=.*|prefix=$root$prefix|" \
        "$root$prefix/lib/pkgconfig/$pc.pc" > "$root/pc/$pc.pc"
done
export PKG_CONFIG_PATH="$root/pc"

for f in bin/lct include/lct.h include/lct_sqlite.h lib/liblct.a \
         lib/liblct_sqlite.a lib/liblct/lct_sqlite.so lib/pkgconfig/lct.pc \
         lib/pkgconfig/lct_sqlite.pc \
         share/man/man1/lct.1 share/man/man3/lct.3 share/doc/liblct/LICENSE \
         share/doc/liblct/CHANGELOG.md; do
    [ -f "$root$prefix/$f" ] || { echo "install-test: $f not installed"; exit 1; }
done

flags=$(pkg-config --static --cflags --libs lct)
echo "install-test: cc count.c $flags"
cc -std=c11 -Wall -Wextra -Werror "$src/examples/count.c" -o "$root/count" $flags
out=$("$root/count" "$src/examples/sample.lct")
grep -q "3000  records (0 skipped)" <<<"$out" || {
    echo "install-test: unexpected output:"; echo "$out"; exit 1; }
# one version everywhere: the installed header's, lct --version's, lct.pc's
header=$(sed -n 's/^#define LCT_VERSION_STRING "\(.*\)"$/\1/p' \
    "$root$prefix/include/lct_core.h")
[ "$("$root$prefix/bin/lct" --version)" = "lct $header (liblct)" ] || {
    echo "install-test: lct --version is not the header's $header"; exit 1; }
[ "$(pkg-config --modversion lct)" = "$header" ] || {
    echo "install-test: lct.pc's version is not the header's $header"; exit 1; }

# A program using the SQL tables links through lct_sqlite.pc alone (it
# pulls in lct and sqlite3, in the order a static link needs).
cat > "$root/sql.c" <<'C'
#include <lct_sqlite.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    if (argc != 2 || sqlite3_open(":memory:", &db) != SQLITE_OK ||
        lct_sqlite_register(db, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT count(*) FROM lct_records(?)", -1,
                           &st, NULL) != SQLITE_OK)
        return 1;
    sqlite3_bind_text(st, 1, argv[1], -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW)
        return 1;
    printf("%lld\n", (long long)sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
    return sqlite3_close(db) != SQLITE_OK;
}
C
flags=$(pkg-config --static --cflags --libs lct_sqlite)
echo "install-test: cc sql.c $flags"
cc -std=c11 -Wall -Wextra -Werror "$root/sql.c" -o "$root/sql" $flags
n=$("$root/sql" "$src/examples/sample.lct")
[ "$n" = 3000 ] || { echo "install-test: lct_sqlite program gave '$n'"; exit 1; }

# The installed extension loads in the sqlite3 shell (not in the
# sanitizer build, whose extension needs the sanitizer runtime preloaded).
if ! ldd "$root$prefix/lib/liblct/lct_sqlite.so" | grep -q libasan; then
    n=$(printf '.load %s\nSELECT count(*) FROM lct_records(%s);\n' \
        "$root$prefix/lib/liblct/lct_sqlite" "'$src/examples/sample.lct'" |
        sqlite3 -bail :memory:)
    [ "$n" = 3000 ] || { echo "install-test: extension gave '$n'"; exit 1; }
fi

make -C "$build" uninstall DESTDIR="$root" >/dev/null
left=$(find "$root$prefix" -type f | wc -l)
[ "$left" -eq 0 ] || { echo "install-test: uninstall left $left files"; exit 1; }
echo "install-test: ok"
