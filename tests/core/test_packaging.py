"""`pip install .` gives a working package: a wheel with every module and data file, and the `ptas` command."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "ptas_sandbox"


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory):
    """`make dist`'s wheel (PyPA's build), built once for this module from a copy of the tree: a build writes
    into its source tree (build/, src/*.egg-info), and two test runs of one checkout at once (a loaded machine
    running `make test` twice) broke each other's build."""
    where = tmp_path_factory.mktemp("wheel")
    tree = where / "tree"
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(where / "dist"), str(tree)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    return next((where / "dist").glob("ptas_sandbox-*-py3-none-any.whl"))


def test_the_wheel_carries_code_data_and_the_console_command(built_wheel):
    wheel = zipfile.ZipFile(built_wheel)
    names = set(wheel.namelist())
    assert {"ptas_sandbox/cli/__init__.py", "ptas_sandbox/simulator/app.py", "ptas_sandbox/simulator/tokens/models.py",
            "ptas_sandbox/testing/plugin.py", "ptas_sandbox/catalogue/account_types.json"} <= names
    # Every data file of the source tree ships, under the same folder of the package.
    for folder, suffix in (("catalogue/scenarios", ".json"), ("features", ".feature"),
                           ("simulator/pages/templates", ".html")):
        on_disk = {f"ptas_sandbox/{folder}/{p.relative_to(PACKAGE / folder).as_posix()}"
                   for p in (PACKAGE / folder).rglob(f"*{suffix}")}
        shipped = {n for n in names if n.startswith(f"ptas_sandbox/{folder}/") and n.endswith(suffix)}
        assert on_disk and shipped == on_disk, folder
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "ptas = ptas_sandbox.cli:main" in wheel.read(entry_points).decode()


def test_the_built_wheel_runs_a_partners_test_and_conform_in_a_fresh_virtualenv(built_wheel):
    """What docs/fixtures.md and the README tell a partner's own project: `make dist`'s wheel (PyPA's build),
    installed with its conform extra into a virtualenv outside the clone, runs the fixtures' example test and
    `ptas conform` (its features ship in the wheel)."""
    wheel = built_wheel
    with tempfile.TemporaryDirectory(prefix="ptas-partner-") as home:     # outside the clone
        venv, project = Path(home) / "venv", Path(home) / "project"
        # No pip inside: the clone's pip installs into it (--python); what is checked is the wheel and what it needs.
        # --no-compile: what the runs below import is compiled as it is imported; the rest (Faker's hundreds of
        # locales) need not be.
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                                    "-q", "--no-compile", f"{wheel}[conform]"], capture_output=True, text=True,
                                   timeout=900)
        assert installed.returncode == 0, installed.stderr[-3000:]
        (project / "tests").mkdir(parents=True)
        (project / "tests" / "test_token_refresh.py").write_text(example_of_the_fixtures())
        environment = {key: value for key, value in os.environ.items()
                       if not key.startswith(("PTAS_", "PYTHON", "VIRTUAL_ENV"))}
        tested = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                                cwd=project, env=environment, capture_output=True, text=True, timeout=300)
        assert tested.returncode == 0 and "4 passed" in tested.stdout, tested.stdout[-3000:] + tested.stderr[-2000:]
        helped = subprocess.run([str(venv / "bin" / "ptas"), "conform", "--help"], cwd=project, env=environment,
                                capture_output=True, text=True, timeout=120)
        assert helped.returncode == 0 and "--report-dir" in helped.stdout, helped.stderr
        conformed = subprocess.run([str(venv / "bin" / "ptas"), "conform", "--tags", "versioning"], cwd=project,
                                   env=environment, capture_output=True, text=True, timeout=300)
        last = conformed.stdout.strip().splitlines()[-1]
        assert conformed.returncode == 0 and re.fullmatch(r"[1-9]\d* passed, 0 failed, 0 not checked", last), \
            conformed.stdout[-3000:] + conformed.stderr[-2000:]
        where = subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import ptas_sandbox; print(ptas_sandbox.__file__)"], cwd=project, env=environment,
                               capture_output=True, text=True, timeout=60)
        assert where.stdout.startswith(str(venv)), where.stdout       # the wheel's copy, not the clone's


def example_of_the_fixtures():
    text = (ROOT / "docs" / "fixtures.md").read_text(encoding="utf-8")
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)
