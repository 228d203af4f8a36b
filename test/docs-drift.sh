#!/bin/sh
# Docs that cannot drift: for every command, each option it accepts is in
# its --help and in its own synopsis in lct(1), and each option its --help
# or its synopsis names is accepted.  "Accepted" is asked of the tool
# itself: an option it does not know is refused with "unknown option";
# anything else (help, a usage error about the value or the operands)
# means it knows it.  The options tried are every one named in any --help
# or anywhere in lct(1).  -h and --help, which every command takes, are
# said once in lct(1) rather than in each synopsis.
set -u
lct="$LCT_BUILDDIR/tools/lct"
man="$LCT_SRCDIR/tools/lct.1"
cmds="info dump check stat gen sql keys mrc sim replay index import export diff"
opts_of_help() { # the options a --help text names
    "$lct" "$1" --help | grep -oE '(^|[][ ,|])--?[a-zA-Z][a-zA-Z0-9-]*' |
        sed 's/^[][ ,|]//' | sort -u
}
fl_opts() { grep -oE 'Fl -?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^Fl /-/' | sort -u; }
man_opts=$(fl_opts < "$man")
# The lines of CMD's synopsis: from ".Cm CMD" to the next ".Nm".
synopsis_opts() {
    sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$man" |
        awk -v c="$1" '/^\.Nm/ { on = 0 } $0 == ".Cm " c { on = 1 } on' |
        fl_opts
}
universe=$( (for c in $cmds; do opts_of_help "$c"; done; echo "$man_opts") |
            sort -u)
accepts() { # accepts CMD OPT
    err=$("$lct" "$1" "$2" x /nonexistent.lct </dev/null 2>&1 >/dev/null)
    case $err in *"unknown option"*) return 1 ;; esac
    return 0
}
fail=0
grep -q 'Every command takes' "$man" ||
    { echo "lct(1) does not say that every command takes -h"; fail=1; }
for c in $cmds; do
    help=$(opts_of_help "$c")
    syn=$(synopsis_opts "$c")
    [ -n "$syn" ] || { echo "lct(1) has no synopsis for $c"; fail=1; }
    for o in $universe; do
        if accepts "$c" "$o"; then
            echo "$help" | grep -qx -- "$o" ||
                { echo "lct $c accepts $o but its --help does not say so"; fail=1; }
            case $o in -h | --help) continue ;; esac
            echo "$syn" | grep -qx -- "$o" ||
                { echo "lct $c accepts $o but its synopsis in lct(1) does not name it"; fail=1; }
        fi
    done
    for o in $help $syn; do
        accepts "$c" "$o" ||
            { echo "lct $c: $o is named (--help or lct(1)) but refused"; fail=1; }
    done
    # the default source is one for every command (LCT_ONE_PASS's pick)
    src=$("$lct" "$c" --help | grep -e '--mmap, --stream')
    case $src in
    "" | *"(default: the faster here)") ;;
    *) echo "lct $c --help says another default source: $src"; fail=1 ;;
    esac
done
# scripts/demo runs every command on the sample, as the README says
demo="$LCT_SRCDIR/scripts/demo"
for c in $cmds; do
    grep -q "^\$lct $c " "$demo" ||
        { echo "scripts/demo does not run lct $c"; fail=1; }
done
[ $fail -eq 0 ] && echo "docs-drift: every option is in --help and its synopsis"
exit $fail
