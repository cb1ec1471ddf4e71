"""The DevUI: a Panel app to chat with agents, run and debug workflows, inspect runs, traces and checkpoints.

Run it with ``panel serve devui`` (the app folder in the repository), ``python -m agentnb.devui [DIR ...]``,
or from Python / a notebook:

```python
import agentnb.devui

url = agentnb.devui.serve(entities=[my_agent, my_workflow])  # background server on 127.0.0.1
print(url)
agentnb.devui.stop(url)
```

Discovery needs only the standard library; the views load Panel on first use, so importing this package
stays cheap until something is served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._discovery import Catalog, DiscoveryError, Entity, discover, entity_kind
from ._server import free_port, is_loopback, running_servers, serve, serving_url, stop

if TYPE_CHECKING:
    from ._app import DevUI, create_app

__all__ = [
    "Catalog",
    "DevUI",
    "DiscoveryError",
    "Entity",
    "create_app",
    "discover",
    "entity_kind",
    "free_port",
    "is_loopback",
    "running_servers",
    "serve",
    "serving_url",
    "stop",
]


def __getattr__(name: str) -> Any:
    # The Panel-backed names load lazily: importing agentnb.devui must not import panel.
    if name in {"DevUI", "create_app"}:
        try:
            from . import _app
        except ImportError as e:  # pragma: no cover - panel is part of the devui extra
            raise ImportError('agentnb.devui needs panel: pip install "agentnb[devui]"') from e
        return getattr(_app, name)
    raise AttributeError(f"module 'agentnb.devui' has no attribute {name!r}")
