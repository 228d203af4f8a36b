#!/bin/sh
# Docs that cannot drift: for every command, each option it accepts is in
# its --help and in lct(1), and each option its --help names is accepted.
# "Accepted" is asked of the tool itself: an option it does not know is
# refused with "unknown option"; anything else (help, a usage error about
# the value or the operands) means it knows it.  The options tried are
# every one named in any --help or in lct(1).
set -u
lct="$LCT_BUILDDIR/tools/lct"
man="$LCT_SRCDIR/tools/lct.1"
cmds="info dump check stat gen sql keys mrc"
opts_of_help() { # the options a --help text names
    "$lct" "$1" --help | grep -oE '(^|[][ ,|])--?[a-zA-Z][a-zA-Z-]*' |
        sed 's/^[][ ,|]//' | sort -u
}
man_opts=$(grep -oE 'Fl -?[a-zA-Z][a-zA-Z-]*' "$man" | sed 's/^Fl /-/' |
           sort -u)
universe=$( (for c in $cmds; do opts_of_help "$c"; done; echo "$man_opts") |
            sort -u)
accepts() { # accepts CMD OPT
    err=$("$lct" "$1" "$2" x /nonexistent.lct </dev/null 2>&1 >/dev/null)
    case $err in *"unknown option"*) return 1 ;; esac
    return 0
}
fail=0
for c in $cmds; do
    help=$(opts_of_help "$c")
    for o in $universe; do
        if accepts "$c" "$o"; then
            echo "$help" | grep -qx -- "$o" ||
                { echo "lct $c accepts $o but its --help does not say so"; fail=1; }
            echo "$man_opts" | grep -qx -- "$o" ||
                { echo "lct $c accepts $o but lct(1) does not name it"; fail=1; }
        fi
    done
    for o in $help; do
        accepts "$c" "$o" ||
            { echo "lct $c --help names $o, which it refuses"; fail=1; }
    done
done
[ $fail -eq 0 ] && echo "docs-drift: every option is in --help and lct(1)"
exit $fail
