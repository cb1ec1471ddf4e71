"""Load a folder of YAML agents and workflows, as the DevUI and notebooks discover Python ones.

Agent files (``kind: Prompt``) are built first, so workflow files in the same folder can invoke them by
name. Each file is read with the safe loader and built with the factories the caller configured; a file
that fails is reported with its error (naming the line), never raised, so one bad file does not hide the
rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from ..exceptions import AgentnbError
from ._loader import AgentFactory
from ._workflow_factory import WorkflowFactory
from ._yaml import load_yaml

__all__ = ["YAML_SUFFIXES", "LoadedDefinition", "definition_kind", "load_definitions"]

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class LoadedDefinition:
    """One YAML file: the agent or workflow built from it, or the error that stopped it."""

    path: Path
    kind: Literal["agent", "workflow"] | None
    text: str
    obj: Any = None
    error: str | None = None
    mtime_ns: int = 0


def definition_kind(data: Any) -> Literal["agent", "workflow"] | None:
    """Whether parsed YAML defines an agent (``kind: Prompt``) or a workflow (``actions`` or ``kind: Workflow``)."""
    if not isinstance(data, Mapping):
        return None
    mapping = cast("Mapping[str, Any]", data)
    kind = mapping.get("kind")
    if kind in ("Prompt", "Agent"):
        return "agent"
    if kind == "Workflow" or "actions" in mapping or "trigger" in mapping:
        return "workflow"
    return None


def load_definitions(
    paths: Iterable[Path],
    *,
    agent_factory: AgentFactory | None = None,
    workflow_factory: WorkflowFactory | None = None,
    agents: Mapping[str, Any] | None = None,
) -> list[LoadedDefinition]:
    """Build every YAML file in ``paths``: agents first, then workflows that may use them (and ``agents``)."""
    if agent_factory is None:
        from ..local import default_chat_client

        agent_factory = AgentFactory(client=default_chat_client())
    loaded: list[LoadedDefinition] = []
    for path in sorted(paths):
        try:
            text = path.read_text(encoding="utf-8")
            stat = path.stat()
        except OSError as e:
            loaded.append(LoadedDefinition(path, None, "", error=f"Cannot read {path}: {e}"))
            continue
        try:
            kind = definition_kind(load_yaml(text, source=str(path)))
        except AgentnbError as e:
            loaded.append(LoadedDefinition(path, None, text, error=str(e), mtime_ns=stat.st_mtime_ns))
            continue
        if kind is None:
            message = f"{path}: neither an agent (kind: Prompt) nor a workflow (actions:)"
            loaded.append(LoadedDefinition(path, None, text, error=message, mtime_ns=stat.st_mtime_ns))
            continue
        loaded.append(LoadedDefinition(path, kind, text, mtime_ns=stat.st_mtime_ns))
    named: dict[str, Any] = dict(agents or {})
    for item in loaded:
        if item.kind == "agent":
            try:
                item.obj = agent_factory.create_agent_from_yaml_path(item.path)
            except (AgentnbError, ValueError, TypeError) as e:
                item.error = str(e)
                continue
            if item.obj.name:
                named.setdefault(item.obj.name, item.obj)
    base = workflow_factory or WorkflowFactory()
    for item in loaded:
        if item.kind == "workflow":
            factory = WorkflowFactory(
                agents={**named, **base.agents},
                bindings=base.bindings,
                http_request_handler=base.http_request_handler,
                mcp_tool_handler=base.mcp_tool_handler,
                configuration=base.configuration,
                checkpoint_storage=base.checkpoint_storage,
                max_iterations=base.max_iterations,
                agent_factory=base.agent_factory or agent_factory,
            )
            try:
                item.obj = factory.create_workflow_from_yaml_path(item.path)
            except (AgentnbError, ValueError, TypeError) as e:
                item.error = str(e)
    return loaded
