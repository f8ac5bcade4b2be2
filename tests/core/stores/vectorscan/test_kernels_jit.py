"""The compiled kernels (numba, a dependency) in the default install: the same bits as the
numpy kernels for pairs in any order, and their compile cache kept in the app's cache folder,
never beside the package's source."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.core.stores.vectorscan import kernels as LM

ROOT = Path(__file__).resolve().parents[4]


def test_the_default_install_compiles_the_kernels() -> None:
    assert LM.has_jit(), "numba is a dependency: the scan's kernels run compiled"


@pytest.mark.parametrize("distance", ["l2", "cosine"])
def test_pairs_in_any_order_have_the_numpy_kernels_bits(distance: str) -> None:
    """Rows in a query's slice in LanceDB's distance order, not ascending (what the shortcut's
    check against LanceDB hands over): the compiled kernels' tiling reads ascending rows, and
    gave other rows' distances to these (the check then refused every probe)."""
    assert LM.has_jit()  # loaded: pairs run compiled
    rng = np.random.default_rng(5)
    x = rng.normal(size=(700, 40)).astype(np.float32)
    q = rng.normal(size=(4, 40)).astype(np.float32)
    counts = [300, 0, 1, 600]
    rows = np.concatenate([rng.permutation(700)[:c] for c in counts]).astype(np.int64)
    ptr = np.concatenate([[0], np.cumsum(counts)])
    got = LM.pairs(x, q, ptr, rows, distance, jit=True)
    want = LM.pairs(x, q, ptr, rows, distance, jit=False)
    assert np.array_equal(got, want)


def test_the_compiled_kernels_are_kept_in_the_app_s_cache_folder(tmp_path: Path) -> None:
    """No NUMBA_CACHE_DIR: what numba compiles goes under the app's cache folder, and the
    package's folder gets none of it; numba's own setting is left as it was."""
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["INSPECTOR_CACHE_DIR"] = str(cache)
    code = ("import numpy as np, numba\n"
            "from inspector.core.stores.vectorscan import kernels as LM\n"
            "assert LM.worth_compiling(LM.JIT_MIN_WORK)\n"
            "x = np.ones((3, 20), np.float32)\n"
            "LM.pairs(x, x[:1], np.array([0, 3]), np.arange(3), 'l2')\n"
            "print(repr(numba.config.CACHE_DIR))\n")
    pkg = ROOT / "inspector" / "core" / "stores" / "vectorscan"
    before = {p for p in pkg.rglob("*") if p.suffix in (".nbi", ".nbc")}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, check=True)
    assert out.stdout.strip() == "''"  # numba's setting for other code: unchanged
    kept = [p.name for p in (cache / "numba").rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert any(n.startswith("kernels_jit.l2_pairs") for n in kept), kept
    assert {p for p in pkg.rglob("*") if p.suffix in (".nbi", ".nbc")} == before


def test_a_small_scan_stays_in_numpy_until_the_kernels_are_loaded(tmp_path: Path) -> None:
    """A first scan too small to repay loading numba (the demo sweep: 50 queries x 6,000 rows;
    loading cost ~0.4 s of its ~4) runs the numpy kernels and loads nothing; a scan worth it
    loads them, and every scan after runs compiled. In a fresh process: this one has them."""
    code = ("import sys, numpy as np\n"
            "from inspector.core.stores.vectorscan import kernels as LM\n"
            "assert not LM.worth_compiling(50 * 6_000) and 'numba' not in sys.modules\n"
            "x = np.ones((3, 20), np.float32)\n"
            "LM.pairs(x, x[:1], np.array([0, 3]), np.arange(3), 'l2')\n"
            "assert 'numba' not in sys.modules and not LM.loaded()\n"
            "assert LM.worth_compiling(LM.JIT_MIN_WORK) and LM.loaded()\n"
            "assert LM.worth_compiling(1)\n"
            "print('ok')\n")
    env = {**os.environ, "INSPECTOR_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_cache_folder_inside_an_opened_store_gets_no_compiled_kernels(tmp_path: Path
                                                                          ) -> None:
    """INSPECTOR_CACHE_DIR pointed inside the store the process opened: numba would keep its
    compile cache there (or, with no folder set, beside the package); the scan runs the numpy
    kernels instead, and nothing is written into the store."""
    from tests.storekit import snapshot, write_random_store

    store_path = write_random_store(tmp_path / "db")
    before = snapshot(store_path)
    code = ("import sys\n"
            "from inspector.core.stores.opening import open_store\n"
            "from inspector.core.stores.vectorscan import kernels as LM\n"
            f"open_store({str(store_path)!r})\n"
            "print(LM.worth_compiling(LM.JIT_MIN_WORK), LM.loaded())\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["INSPECTOR_CACHE_DIR"] = str(store_path / "cache")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
    assert snapshot(store_path) == before
