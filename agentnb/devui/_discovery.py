"""Find the agents and workflows the DevUI shows: from directories, module names, or objects passed in.

A directory is scanned one level deep: each ``*.py`` file and each package (a folder with ``__init__.py``)
is imported, and whatever it exports under ``agent``, ``workflow``, ``agents`` or ``workflows`` becomes an
entity. Each ``*.yaml``/``*.yml`` file is a declarative agent or workflow (``agentnb.declarative``): read
with the safe loader, never imported; workflow files may invoke the folder's agents by name, and a saved
edit is picked up by :meth:`Catalog.reload`. A module or file that fails to load is kept as a
:class:`DiscoveryError` with its error, so the UI can list it instead of crashing.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from agentnb._json import is_list_or_tuple

__all__ = ["Catalog", "DiscoveryError", "Entity", "app_catalog", "discover", "entity_kind"]

EntityKind = Literal["agent", "workflow"]

# Names a module may export; the plural forms hold a list (or dict) of entities.
_EXPORT_NAMES = ("agent", "workflow", "agents", "workflows")

ENV_VAR = "AGENTNB_ENTITIES"


@dataclass
class Entity:
    """One agent or workflow the DevUI can run.

    Example:
        >>> from agentnb.devui import Entity
        >>> Entity(id="echo", name="echo", kind="agent", obj=object()).kind
        'agent'
    """

    id: str
    name: str
    kind: EntityKind
    obj: Any
    source: str = "passed in"
    description: str = ""
    # For entities read from YAML: the file's text (shown beside the graph) and its path and mtime (reload).
    definition: str | None = None
    path: str | None = None
    mtime_ns: int = 0


@dataclass
class DiscoveryError:
    """A module that could not be imported, kept with its error so the UI can show it."""

    source: str
    message: str
    traceback: str


@dataclass
class Catalog:
    """What the DevUI shows: entities by id, plus the modules that failed to load."""

    entities: list[Entity] = field(default_factory=list)
    errors: list[DiscoveryError] = field(default_factory=list)
    offline: bool = False
    note: str = ""

    def get(self, entity_id: str) -> Entity:
        """Return the entity with ``entity_id``; raise ``KeyError`` naming the known ids otherwise."""
        for entity in self.entities:
            if entity.id == entity_id:
                return entity
        known = ", ".join(e.id for e in self.entities) or "none"
        raise KeyError(f"No entity {entity_id!r}; known: {known}.")

    @property
    def agents(self) -> list[Entity]:
        """The agent entities, in discovery order."""
        return [e for e in self.entities if e.kind == "agent"]

    @property
    def workflows(self) -> list[Entity]:
        """The workflow entities, in discovery order."""
        return [e for e in self.entities if e.kind == "workflow"]

    def add(self, obj: Any, *, source: str = "passed in", name: str | None = None) -> Entity:
        """Add one agent or workflow object; raise ``TypeError`` for anything else."""
        kind = entity_kind(obj)
        if kind is None:
            raise TypeError(
                f"{type(obj).__name__} from {source} is neither an agent nor a workflow; pass an agentnb "
                "Agent (anything with run() and create_session()) or a Workflow."
            )
        label = name or _object_name(obj) or kind
        base = _slug(label)
        taken = {e.id for e in self.entities}
        entity_id, n = base, 2
        while entity_id in taken:
            entity_id, n = f"{base}-{n}", n + 1
        description = getattr(obj, "description", None) or ""
        entity = Entity(id=entity_id, name=label, kind=kind, obj=obj, source=source, description=str(description))
        self.entities.append(entity)
        return entity

    def extend(self, other: Catalog) -> None:
        """Merge another catalog's entities (re-identified when ids clash) and errors into this one."""
        for entity in other.entities:
            added = self.add(entity.obj, source=entity.source, name=entity.name)
            added.definition, added.path, added.mtime_ns = entity.definition, entity.path, entity.mtime_ns
        self.errors.extend(other.errors)

    def reload(self, entity_id: str) -> bool:
        """Rebuild a YAML entity whose file changed since it was loaded; ``True`` when it was rebuilt.

        A file that no longer builds keeps the entity as it was and records the error in ``errors``.
        """
        entity = self.get(entity_id)
        if entity.path is None:
            return False
        path = Path(entity.path)
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            return False
        if mtime == entity.mtime_ns:
            return False
        from agentnb.declarative._files import load_definitions

        agents = {e.name: e.obj for e in self.agents if e.id != entity_id}
        (loaded,) = load_definitions([path], agents=agents)
        entity.mtime_ns = loaded.mtime_ns
        if loaded.obj is None:
            self.errors.append(DiscoveryError(source=str(path), message=loaded.error or "", traceback=""))
            return False
        entity.obj, entity.definition = loaded.obj, loaded.text
        entity.description = str(getattr(loaded.obj, "description", None) or "")
        return True


def entity_kind(obj: Any) -> EntityKind | None:
    """Tell whether ``obj`` is a workflow, an agent, or neither (``None``)."""
    if isinstance(obj, type):
        return None
    try:
        from agentnb.workflows import Workflow
    except ImportError:
        Workflow = None
    if Workflow is not None and isinstance(obj, Workflow):
        return "workflow"
    if callable(getattr(obj, "run", None)) and callable(getattr(obj, "create_session", None)):
        return "agent"
    # Duck-typed workflows (e.g. defined before agentnb.workflows was importable) expose their executors.
    if callable(getattr(obj, "run", None)) and hasattr(obj, "executors") and hasattr(obj, "start_executor_id"):
        return "workflow"
    return None


def discover(sources: Iterable[str | os.PathLike[str] | Any] = (), *, env: bool = True) -> Catalog:
    """Build a catalog from directories, module names, files and objects.

    Args:
        sources: Directories (scanned one level deep), ``.py`` files, importable module names, or agent and
            workflow objects.
        env: Also read ``AGENTNB_ENTITIES`` (``os.pathsep``-separated directories or module names).

    Returns:
        The catalog; import failures are in ``catalog.errors``, never raised.
    """
    catalog = Catalog()
    items: list[Any] = list(sources)
    if env and os.environ.get(ENV_VAR):
        items.extend(p for p in os.environ[ENV_VAR].split(os.pathsep) if p.strip())
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            _discover_path(catalog, cast("str | os.PathLike[str]", item))
        else:
            catalog.add(item)
    return catalog


def _discover_path(catalog: Catalog, item: str | os.PathLike[str]) -> None:
    path = Path(item).expanduser()
    if path.is_dir() and not (path / "__init__.py").exists():
        definitions: list[Path] = []
        for child in sorted(path.iterdir()):
            if child.name.startswith(("_", ".")):
                continue
            if child.suffix == ".py" or (child.is_dir() and (child / "__init__.py").exists()):
                _load_module_file(catalog, child)
            elif child.suffix in _YAML_SUFFIXES and child.is_file():
                definitions.append(child)
        if definitions:
            _load_definitions(catalog, definitions)
        return
    if path.is_file() and path.suffix in _YAML_SUFFIXES:
        _load_definitions(catalog, [path])
        return
    if path.exists():
        _load_module_file(catalog, path)
        return
    text = os.fspath(item)
    if re.fullmatch(r"[A-Za-z_][\w.]*", text):
        _import_into(catalog, text, lambda: importlib.import_module(text))
        return
    catalog.errors.append(
        DiscoveryError(source=text, message=f"No such directory, file or module: {text!r}", traceback="")
    )


_YAML_SUFFIXES = (".yaml", ".yml")


def _load_definitions(catalog: Catalog, paths: list[Path]) -> None:
    """Add the agents and workflows YAML files define (the folder's Python agents are available by name)."""
    try:
        from agentnb.declarative._files import load_definitions
    except ImportError as exc:  # PyYAML missing: every file says so
        for path in paths:
            catalog.errors.append(DiscoveryError(source=str(path), message=str(exc), traceback=""))
        return
    agents = {e.name: e.obj for e in catalog.agents}
    for loaded in load_definitions(paths, agents=agents):
        if loaded.obj is None:
            catalog.errors.append(DiscoveryError(source=str(loaded.path), message=loaded.error or "", traceback=""))
            continue
        entity = catalog.add(loaded.obj, source=str(loaded.path))
        entity.definition, entity.path, entity.mtime_ns = loaded.text, str(loaded.path), loaded.mtime_ns


def _load_module_file(catalog: Catalog, path: Path) -> None:
    """Import a file or package under a private, path-derived name so two folders may hold ``agents.py``."""
    path = path.resolve()
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    stem = path.stem if path.suffix == ".py" else path.name
    module_name = f"agentnb_devui_entities.{_slug(stem).replace('-', '_')}_{digest}"
    init = path / "__init__.py" if path.is_dir() else path

    def load() -> Any:
        if module_name in sys.modules:
            return sys.modules[module_name]
        spec = importlib.util.spec_from_file_location(
            module_name, init, submodule_search_locations=[str(path)] if path.is_dir() else None
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"Cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        return module

    _import_into(catalog, str(path), load)


def _import_into(catalog: Catalog, source: str, load: Any) -> None:
    try:
        module = load()
    except Exception as exc:  # any error in user code is reported, never raised
        catalog.errors.append(
            DiscoveryError(source=source, message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
        )
        return
    found = 0
    for export in _EXPORT_NAMES:
        value = getattr(module, export, None)
        if value is None:
            continue
        values: list[tuple[Any, Any]]
        if isinstance(value, dict):
            values = list(cast("dict[Any, Any]", value).items())
        elif is_list_or_tuple(value):
            values = [(None, v) for v in value]
        else:
            values = [(None, value)]
        for name, obj in values:
            try:
                catalog.add(obj, source=source, name=name)
                found += 1
            except TypeError as exc:
                catalog.errors.append(DiscoveryError(source=source, message=str(exc), traceback=""))
    if not found and not any(getattr(module, n, None) is not None for n in _EXPORT_NAMES):
        catalog.errors.append(
            DiscoveryError(
                source=source,
                message="The module exports no `agent`, `workflow`, `agents` or `workflows`.",
                traceback="",
            )
        )


def _object_name(obj: Any) -> str | None:
    for attr in ("name", "id"):
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value:
            return value
    return None


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", text.strip()).strip("-").lower()
    return slug or "entity"


_app_catalogs: dict[tuple[str, ...], Catalog] = {}


def app_catalog(args: Iterable[str] = ()) -> Catalog:
    """Return the catalog a served app shows, built once per process and argument list.

    ``panel serve`` runs the app script once per browser session; caching keeps user modules from being
    re-imported (and their agents rebuilt) on every page load. With no arguments and no ``AGENTNB_ENTITIES``
    the demos that ship with agentnb are shown.
    """
    key = (*args, os.environ.get(ENV_VAR, ""))
    catalog = _app_catalogs.get(key)
    if catalog is None:
        if any(key):
            catalog = discover(list(args))
        else:
            from .demos import demo_catalog

            catalog = demo_catalog()
        _app_catalogs[key] = catalog
    return catalog
