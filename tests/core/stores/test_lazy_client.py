"""LanceDB's REST namespace client stays unimported on the local path (issue 22: it is about
half of `import lancedb`) and loads in full the moment anything reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.storekit import rows_at_distance, write_table

PROBE = """
import json, sys
from inspector.cli import main
code = main(["query", sys.argv[1], "--vector", "[1, 0, 0, 0]", "--limit", "2", "--json"])
api = "lance_namespace_urllib3_client.api" in sys.modules
import lance_namespace_urllib3_client as client
client_class = client.ApiClient.__name__  # the package's own attribute: the real __init__ runs
print(json.dumps({"code": code, "api_before": api, "client": client_class,
                  "api_after": "lance_namespace_urllib3_client.api" in sys.modules}))
"""


def test_a_local_query_never_imports_the_rest_client_and_reading_it_loads_it(
        tmp_path: Path) -> None:
    store = write_table(tmp_path / "s", rows_at_distance(["a", "b", "c"], [0.1, 0.2, 0.3])
                        .to_pydict())
    done = subprocess.run([sys.executable, "-c", PROBE, str(store)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    *answer, last = done.stdout.strip().splitlines()
    assert json.loads("\n".join(answer))["stages"][-1]["count"] == 2  # the query's own JSON
    got = json.loads(last)
    assert got == {"code": 0, "api_before": False, "client": "ApiClient", "api_after": True}


def test_nothing_is_deferred_twice_or_when_absent() -> None:
    from inspector._lazy_client import defer

    assert defer() is False  # imported already in this process (by lancedb or the hook)
    assert defer("no_such_package_for_inspector_tests") is False
    assert "no_such_package_for_inspector_tests" not in sys.modules
