"""`pip install .` gives a working package: a wheel with every module and data file, and the `ptas` command."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "ptas_sandbox"


def test_the_wheel_carries_code_data_and_the_console_command(tmp_path):
    # Built from a copy: pip builds in the source tree (build/, src/*.egg-info), and two test runs of one
    # checkout at once (a loaded machine running `make test` twice) broke each other's build.
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(tree)],
                   check=True, capture_output=True)
    wheel = zipfile.ZipFile(next(tmp_path.glob("ptas_sandbox-*.whl")))
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
