"""`scripts/dev app` sets up the app alone (no test package); `test` and the other commands the
test and docs stack. Run on a copy of the script with a stand-in Python that records what it
is asked to install, so nothing is installed and no Debian package is looked for."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

VENV_PYTHON = """#!/bin/sh
echo "python $*" >> "$DEV_LOG"
case "$1" in -c) exec "$REAL_PYTHON" "$@" ;; esac
exit 0
"""
INSPECTOR = """#!/bin/sh
echo "inspector $*" >> "$DEV_LOG"
"""
# python3 itself: `-m venv DIR` makes a virtualenv of stand-ins, anything else runs for real
PYTHON = f"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    cat > "$3/bin/python" <<'EOF'
{VENV_PYTHON}EOF
    cat > "$3/bin/inspector" <<'EOF'
{INSPECTOR}EOF
    chmod +x "$3/bin/python" "$3/bin/inspector"
    exit 0
fi
exec "$REAL_PYTHON" "$@"
"""


def _checkout(tmp: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "dev", repo / "scripts" / "dev")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    bin_ = tmp / "bin"
    bin_.mkdir()
    (bin_ / "python3").write_text(PYTHON)
    (bin_ / "dpkg-query").write_text("#!/bin/sh\necho 'install ok installed'\n")
    for f in bin_.iterdir():
        f.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}",
           "PYTHON": str(bin_ / "python3"), "REAL_PYTHON": sys.executable,
           "DEV_LOG": str(tmp / "log")}
    return repo, env


def _dev(repo: Path, env: dict[str, str], *args: str) -> list[str]:
    log = Path(env["DEV_LOG"])
    log.write_text("")
    done = subprocess.run(["bash", str(repo / "scripts" / "dev"), *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


def _installs(lines: list[str]) -> list[str]:
    return [x for x in lines if " pip install " in f" {x} " and "--upgrade pip" not in x]


def test_app_installs_the_app_alone_and_test_the_test_stack(tmp_path):
    repo, env = _checkout(tmp_path)
    lines = _dev(repo, env, "app", "--table", "t")
    assert _installs(lines) == ["python -m pip install -q -e ."], lines
    assert "inspector --table t" in lines
    assert _installs(_dev(repo, env, "app")) == []  # set up once per pyproject.toml
    lines = _dev(repo, env, "test", "-q")
    assert _installs(lines) == ["python -m pip install -q -e .[test,docs]"], lines
    assert any(x.startswith("python -m pytest -n ") for x in lines)
    assert _installs(_dev(repo, env, "app")) == []  # the test stack holds the app
    assert _installs(_dev(repo, env, "setup")) == []


def test_bench_installs_what_its_window_manager_rows_need(tmp_path: Path) -> None:
    """The bench times the slider tick under Xvfb with openbox too; on a machine without them
    it silently timed offscreen only."""
    repo, env = _checkout(tmp_path)
    (tmp_path / "bin" / "dpkg-query").write_text(
        '#!/bin/sh\necho "dpkg-query $*" >> "$DEV_LOG"\necho \'install ok installed\'\n')
    lines = _dev(repo, env, "bench", "--only", "tick")
    asked = {x.split()[-1] for x in lines if x.startswith("dpkg-query")}
    assert {"xvfb", "openbox", "xauth", "libxcb-cursor0"} <= asked, sorted(asked)
    assert "python bench/run.py --only tick" in lines


MKDOCS = """#!/bin/sh
echo "mkdocs $*" >> "$DEV_LOG"
while [ "$#" -gt 0 ]; do [ "$1" = --site-dir ] && site=$2; shift; done
mkdir -p "$site" && echo '<html>' > "$site/index.html"
"""


def test_docs_keeps_the_site_where_it_says_and_never_empties_a_folder_of_other_files(
        tmp_path: Path) -> None:
    """`scripts/dev docs` used to build into a folder it then deleted; now the site stays in
    DIR (by default inspector-site in the temp folder) and the script says where. mkdocs
    empties the folder it builds into, so a folder holding other files is refused."""
    repo, env = _checkout(tmp_path)
    _dev(repo, env, "test", "--collect-only")  # the venv of stand-ins
    (repo / ".venv" / "bin" / "mkdocs").write_text(MKDOCS)
    (repo / ".venv" / "bin" / "mkdocs").chmod(0o755)
    env = {**env, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    done = subprocess.run(["bash", str(repo / "scripts" / "dev"), "docs"], env=env,
                          capture_output=True, text=True, timeout=120)
    site = tmp_path / "tmp" / "inspector-site"
    assert done.returncode == 0, done.stderr
    assert (site / "index.html").is_file() and f"in {site}" in done.stdout
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    done = subprocess.run(["bash", str(repo / "scripts" / "dev"), "docs", str(mine)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not a built site" in done.stderr
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
