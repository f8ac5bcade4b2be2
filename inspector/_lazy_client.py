"""LanceDB's REST namespace client, loaded only when something uses it.

`import lancedb` imports `lance_namespace_urllib3_client`, whose package `__init__` builds every
generated REST API class (about half of `import lancedb`, issue 22). Local stores use only its
model classes, which live in submodules. So the package is registered without running its
`__init__`: submodule imports work as usual (its `__path__` is set), and the first attribute
read from the package itself (a remote namespace's `ApiClient`, say) runs the real `__init__`
(PEP 562 `__getattr__`) and answers from it. Nothing changes for code that uses the client;
it is only imported later."""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any

NAME = "lance_namespace_urllib3_client"
_lock = threading.Lock()


def defer(name: str = NAME) -> bool:
    """Register `name` unexecuted; False when it is already imported or not installed."""
    if name in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def __getattr__(attr: str) -> Any:  # noqa: N807 - the module hook's own name
        with _lock:
            if module.__dict__.pop("__getattr__", None) is not None:
                loader.exec_module(module)
        if attr in module.__dict__:
            return module.__dict__[attr]
        raise AttributeError(f"module {name!r} has no attribute {attr!r}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    return True
