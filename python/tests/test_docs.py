"""Every `>>>` example in README.md and docs/*.md, run from the source
tree with this build's module and compared with what the page shows
(doctest, with `...` standing for any text).  Pages are run in order,
each in a fresh namespace; one whose examples need pandas is skipped,
and said, where pandas is not installed."""
import doctest
import glob
import os
import sys

from support import TOP, Skip, run


def pages():
    yield os.path.join(TOP, "README.md")
    yield from sorted(glob.glob(os.path.join(TOP, "docs", "*.md")))


def test_every_python_example_in_the_docs_prints_what_the_docs_say():
    try:
        import pandas  # noqa: F401
    except ImportError:
        raise Skip("pandas is not installed for this interpreter")
    parser = doctest.DocTestParser()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    runner = doctest.DocTestRunner(optionflags=flags)
    examples = 0
    cwd = os.getcwd()
    os.chdir(TOP)
    try:
        for path in pages():
            with open(path, encoding="utf-8") as f:
                text = f.read()
            name = os.path.relpath(path, TOP)
            test = parser.get_doctest(text, {}, name, path, 0)
            examples += len(test.examples)
            runner.run(test)
    finally:
        os.chdir(cwd)
    result = runner.summarize(verbose=False)
    assert examples >= 10, f"only {examples} examples found"
    assert result.failed == 0, f"{result.failed} of {examples} failed"


if __name__ == "__main__":
    sys.exit(run(globals()))
