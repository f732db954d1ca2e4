"""`make test`'s last line: the outcome of every pass (every test on SQLite, the store's tests again on
PostgreSQL and on SQLite's store-exact path) from their JUnit XML, so the line a reader sees last does not speak
for the last pass alone."""

import sys
from xml.etree import ElementTree


def outcome(path):
    """`N passed, N failed, N skipped` of one pytest JUnit XML file."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return "did not run"
    suites = [root] if root.tag == "testsuite" else list(root)
    total = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
    failed = total["failures"] + total["errors"]
    return f"{total['tests'] - failed - total['skipped']} passed, {failed} failed, {total['skipped']} skipped"


def main(argv):
    """argv: LABEL=PATH ..."""
    parts = [f"{label}: {outcome(path)}" for label, _, path in (arg.partition("=") for arg in argv)]
    print("make test: " + "; ".join(parts))


if __name__ == "__main__":
    main(sys.argv[1:])
