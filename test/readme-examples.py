#!/usr/bin/env python3
"""The documentation's examples, run and compared, so docs cannot drift.
Every indented `$ command` block of README.md and docs/*.md that runs
`lct` or an example program is run from the source tree with the build's tools,
and its output must be the lines the README shows under it: `...` stands
for any lines, trailing spaces do not count.  Skipped, and said: the
interactive sqlite3 session, commands that write files (`--svg`, `gen`
but to a pipe, `./build/...`), and `jq` pipelines when jq is not installed.  The `>>>`
Python examples are run by python/tests/test_docs.py (they need the
module built).

    readme-examples.py SRCDIR BUILDDIR
"""
import os
import re
import shlex
import shutil
import subprocess
import sys


def examples(text):
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("    $ "):
            i += 1
            continue
        cmd = lines[i][6:]
        i += 1
        while True:  # a command goes on while quoted or continued
            try:
                shlex.split(cmd.replace("\\\n", " "))
                complete = not cmd.endswith("\\")
            except ValueError:
                complete = False
            if complete or i >= len(lines):
                break
            cmd += "\n" + lines[i].strip() if not cmd.endswith("\\") else \
                "\n" + lines[i].strip()
            i += 1
        want = []
        while (i < len(lines) and lines[i].startswith("    ") and
               not lines[i].startswith("    $ ")):
            want.append(lines[i][4:].rstrip())
            i += 1
        yield cmd, want


def matches(want, got):
    if not want:
        return not got
    if want[0].strip() == "...":
        return any(matches(want[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and want[0] == got[0] and matches(want[1:], got[1:])


def main():
    src, build = sys.argv[1], sys.argv[2]
    docs = ["README.md"] + sorted(
        os.path.join("docs", n) for n in os.listdir(os.path.join(src, "docs"))
        if n.endswith(".md"))
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "tools") + os.pathsep + env["PATH"]
    env.pop("LCT_PROGRESS_BYTES", None)
    ran = failed = 0
    for doc in docs:
        with open(os.path.join(src, doc)) as f:
            ran, failed = run_doc(doc, f.read(), src, build, env, ran, failed)
    print("doc examples: %d run, %d differ" % (ran, failed))
    stale = stale_options(src, docs, env)
    return 1 if failed or stale or not ran else 0


COMMANDS = ("info", "dump", "check", "stat", "gen", "sql", "keys", "mrc", "sim",
            "replay", "index", "import")


def stale_options(src, docs, env):
    """Every option a doc shows with its command, in a code span or a
    code line (`lct mrc --requests all`), must be one that command's
    --help names: a renamed or removed option fails here even where no
    example runs it."""
    helps = {}
    for c in COMMANDS:
        helps[c] = subprocess.run(["lct", c, "--help"], env=env,
                                  capture_output=True, text=True).stdout
    use = re.compile(r"\blct (%s)\b([^`\n]*)" % "|".join(COMMANDS))
    stale = 0
    for doc in docs:
        with open(os.path.join(src, doc)) as f:
            text = f.read()
        spans = re.findall(r"`([^`]+)`", text.replace("\n", " ")) + \
            [l for l in text.splitlines() if l.startswith("    ")]
        for span in spans:
            for cmd, rest in use.findall(span):
                rest = re.split(r"[|;]", rest)[0]
                for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                    if not re.search(r"(?<![\w-])%s(?![\w-])" % opt,
                                     helps[cmd]):
                        print("%s: `lct %s %s`: lct %s --help has no %s"
                              % (doc, cmd, opt, cmd, opt))
                        stale += 1
    print("doc options: %d stale" % stale)
    return stale


def run_doc(doc, text, src, build, env, ran, failed):
    for cmd, want in examples(text):
        first = cmd.split()[0]
        if first not in ("lct", "examples/replay", "examples/count",
                         "examples/backend", "examples/keyset"):
            print("skipped (not lct): " + cmd.splitlines()[0])
            continue
        # lct gen writing to standard output into a pipe writes no file
        if "--svg" in cmd or (" gen " in cmd and " - | " not in cmd):
            print("skipped (writes a file): " + cmd.splitlines()[0])
            continue
        if "| jq" in cmd and not shutil.which("jq"):
            print("skipped (no jq): " + cmd.splitlines()[0])
            continue
        run = re.sub(r"^examples/", os.path.join(build, "examples") + "/", cmd)
        out = subprocess.run(["bash", "-c", run], cwd=src, env=env,
                             capture_output=True, text=True).stdout
        got = [line.rstrip() for line in out.splitlines()]
        ran += 1
        if not matches(want, got):
            failed += 1
            print("%s: example differs: $ %s" % (doc, cmd))
            print("  want:\n    " + "\n    ".join(want))
            print("  got:\n    " + "\n    ".join(got[:40]))
    return ran, failed


if __name__ == "__main__":
    sys.exit(main())
