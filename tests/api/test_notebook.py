"""docs/notebooks/quickstart.ipynb runs top to bottom in a real Jupyter kernel (nbclient and
ipykernel, in the test extra), over the demo store, with the test's private app folders: the
kernel is a subprocess that inherits them. Its rich outputs are the API's own."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import inspector
from tests.conftest import ROOT

NOTEBOOK = ROOT / "docs" / "notebooks" / "quickstart.ipynb"


def test_quickstart_notebook_runs_in_a_kernel(demo_path: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    # Jupyter's and IPython's own folders (connection files, history) stay private too
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "IPYTHONDIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("INSPECTOR_NOTEBOOK_STORE", str(demo_path))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        "the notebook is stored without outputs"
    # one more cell, in memory only: what the kernel process sees of the test's app folders
    nb.cells.append(nbformat.v4.new_code_cell(
        "import json, os\nprint(json.dumps({k: os.environ.get(k) for k in "
        "('INSPECTOR_CACHE_DIR', 'INSPECTOR_DATA_DIR', 'XDG_CONFIG_HOME')}))"))
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()

    env = json.loads(nb.cells[-1].outputs[0]["text"])
    assert env == {k: os.environ[k] for k in env}
    html = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
    store = inspector.open(str(demo_path))
    text = "how do I rotate the signing keys for service tokens"
    before = store.query(text=text, preset="docs-before-fix", scope="vault-agent", limit=10)
    after = store.query(text=text, preset="docs-before-fix", scope="vault-agent", limit=10,
                        filter="pushdown")
    assert html == [store._repr_html_(), before._repr_html_(), after._repr_html_()]
    assert "<b>0 of 10</b>" in html[1] and "<b>10 of 10</b>" in html[2]
    applied = next(c for c in nb.cells if "before.apply(" in c.source)
    assert applied.outputs[0]["data"]["text/plain"] == "True"  # a fix returns what it says
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors
