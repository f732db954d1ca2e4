"""`make test`'s last line: the outcome of every pass (every test on SQLite, in two processes side by side, the
store's tests again on PostgreSQL and on SQLite's store-exact path) from their JUnit XML, so the line a reader
sees last does not speak for the last pass alone."""

import sys
from xml.etree import ElementTree


def counts(path):
    """{tests, failures, errors, skipped} of one pytest JUnit XML file, or None when it is not there."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root)
    return {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}


def outcome(paths):
    """`N passed, N failed, N skipped` of one pass: a JUnit XML file, or several joined by `+` (one pass run
    as several processes); "did not run" when any is missing."""
    found = [counts(path) for path in paths.split("+")]
    if None in found:
        return "did not run"
    total = {k: sum(c[k] for c in found) for k in found[0]}
    failed = total["failures"] + total["errors"]
    return f"{total['tests'] - failed - total['skipped']} passed, {failed} failed, {total['skipped']} skipped"


def main(argv):
    """argv: LABEL=PATH[+PATH...] ..."""
    parts = [f"{label}: {outcome(path)}" for label, _, path in (arg.partition("=") for arg in argv)]
    print("make test: " + "; ".join(parts))


if __name__ == "__main__":
    main(sys.argv[1:])
