"""The README as a newcomer meets it: its First steps run as written against `ptas serve`, every command they
show succeeds, the banner spells `ptas` as the README does, and every link it gives leads to a page."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BIN = os.path.dirname(sys.executable)


def first_steps():
    """The shell block of the README's First steps, as a reader copies it."""
    section = README.split("\n## First steps\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```sh\n(.*?)```", section, flags=re.S).group(1)


@pytest.fixture
def served():
    """`ptas serve` as `make serve` starts it (the venv's ptas, not on PATH), on a free port; its banner."""
    ptas = os.path.relpath(os.path.join(BIN, "ptas"), ROOT)
    process = subprocess.Popen([ptas, "serve", "--port", "0", "--state", ":memory:", "--quiet"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PATH": "/usr/bin:/bin"})
    try:
        banner = [process.stdout.readline() for _ in range(4)]
        base = re.search(r"on (http://127\.0\.0\.1:\d+)", banner[0]).group(1)
        yield base, "".join(banner)
    finally:
        process.terminate()
        process.wait(30)


def test_the_first_steps_run_as_written(served):
    base, _ = served
    # Only the address differs (a free port), and curl fails on an HTTP error so that set -e stops at it.
    script = first_steps().replace("http://127.0.0.1:8080", base)
    script = script.replace(".venv/bin/", os.path.relpath(BIN, ROOT) + "/")
    done = subprocess.run(["bash", "-c", 'set -eu -o pipefail\ncurl() { command curl --fail-with-body "$@"; }\n'
                           + script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PTAS_URL": base, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert '"transactions": [{' in done.stdout                 # the account's first import is there
    assert "CreateAccount" in done.stdout and f"{base}/_sandbox/inspect/login?ticket=" in done.stdout
    # each answer on a line of its own, not run together with the next command's output
    answers = [line for line in done.stdout.splitlines() if line.startswith("{")]
    # (the revoked token, the account type, a page of transactions)
    assert len(answers) == 3 and all(line.endswith("}") and "}{" not in line for line in answers), done.stdout[-2000:]


def test_the_first_steps_leave_the_shells_own_variables_alone():
    assigned = set(re.findall(r"^(?:export )?([A-Z_]+)=", first_steps(), flags=re.M))
    assert assigned and not assigned & {"USER", "HOME", "PATH", "PWD", "SHELL", "LANG", "TERM", "LOGNAME"}, assigned


def test_the_banner_and_the_readme_spell_ptas_alike(served):
    _, banner = served
    assert ".venv/bin/ptas inspect" in banner and ".venv/bin/ptas inspect" in README
    typed = "\n".join(re.findall(r"```\w*\n(.*?)```", README, flags=re.S))     # what a reader copies
    assert not re.search(r"(?m)^\s*ptas ", typed) and ".venv/bin/ptas" in typed


def test_every_link_leads_to_a_page_and_the_readme_stays_short():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert links and all((ROOT / link).is_file() for link in links), [
        link for link in links if not (ROOT / link).is_file()]
    for page in (ROOT / "docs").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        missing = [link for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text)
                   if not (page.parent / link).exists()]
        assert not missing, f"{page.name}: {missing}"
    assert len(README.encode()) <= 10_240
