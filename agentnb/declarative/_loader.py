"""``AgentFactory``: build an ordinary :class:`~agentnb.Agent` from a YAML (``kind: Prompt``) definition.

A definition file is data, never code. The factory reads it with a safe loader (plain YAML only), checks
every key against the format (an unknown key is an error naming its line), and resolves everything that
could reach outside the process through what the caller passed:

- functions come from ``bindings=`` (name to callable) or from import strings the caller listed in
  ``allowed_imports=``; a file cannot make the factory import any other module;
- model clients come from agentnb's provider table (or ``additional_mappings=`` the caller adds);
- MCP servers are used only when the caller passes them by name (``mcp_tools=``) or allows their URL
  (``allowed_mcp_urls=``); a file cannot start a process;
- a model ``connection.endpoint`` must match ``allowed_endpoints=`` (in safe mode);
- ``=Env.NAME`` expressions read the environment only with ``safe_mode=False``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ..exceptions import DeclarativeLoaderError, ProviderLookupError
from ._expressions import ExpressionError, evaluate, is_expression, names_in
from ._schema import output_model, properties_to_json_schema
from ._yaml import line_of, locate, read_definition

if TYPE_CHECKING:
    from .._agents import Agent
    from .._clients import BaseChatClient

__all__ = ["PROVIDER_TYPE_OBJECT_MAPPING", "AgentFactory", "ProviderTypeMapping"]


class ProviderTypeMapping(TypedDict):
    """Where the client class for a ``provider``/``apiType`` lives and which constructor arguments it takes."""

    package: str
    name: str
    model_field: str
    endpoint_field: str | None
    api_key_field: str | None


def _openai(name: str) -> ProviderTypeMapping:
    return {
        "package": "agentnb.openai",
        "name": name,
        "model_field": "model",
        "endpoint_field": "base_url",
        "api_key_field": "api_key",
    }


_LOCAL: ProviderTypeMapping = {
    "package": "agentnb.local",
    "name": "ToolCallingChatClient",
    "model_field": "model_id",
    "endpoint_field": None,
    "api_key_field": None,
}

#: ``provider`` or ``provider.apiType`` -> agentnb client. The modules named here are the only ones a
#: definition can cause to be imported (besides what the caller adds).
PROVIDER_TYPE_OBJECT_MAPPING: dict[str, ProviderTypeMapping] = {
    "OpenAI": _openai("OpenAIChatClient"),
    "OpenAI.Responses": _openai("OpenAIChatClient"),
    "OpenAI.Chat": _openai("OpenAIChatCompletionClient"),
    "AzureOpenAI": _openai("OpenAIChatClient"),
    "AzureOpenAI.Responses": _openai("OpenAIChatClient"),
    "AzureOpenAI.Chat": _openai("OpenAIChatCompletionClient"),
    "Anthropic": {
        "package": "agentnb.anthropic",
        "name": "AnthropicClient",
        "model_field": "model",
        "endpoint_field": "base_url",
        "api_key_field": "api_key",
    },
    "Local": _LOCAL,
    "Local.ToolCalling": _LOCAL,
}
PROVIDER_TYPE_OBJECT_MAPPING["Anthropic.Chat"] = PROVIDER_TYPE_OBJECT_MAPPING["Anthropic"]

_AGENT_KEYS = frozenset(
    {
        "kind",
        "name",
        "displayName",
        "description",
        "instructions",
        "model",
        "tools",
        "outputSchema",
        "inputSchema",
        "metadata",
        "template",
    }
)
_MODEL_KEYS = frozenset({"id", "provider", "apiType", "connection", "options"})
_CONNECTION_KEYS = frozenset(
    {"kind", "authenticationMode", "usageDescription", "name", "target", "endpoint", "apiKey", "key"}
)
_OPTION_KEYS: dict[str, str] = {
    "frequencyPenalty": "frequency_penalty",
    "presencePenalty": "presence_penalty",
    "maxOutputTokens": "max_tokens",
    "temperature": "temperature",
    "topP": "top_p",
    "seed": "seed",
    "stopSequences": "stop",
    "allowMultipleToolCalls": "allow_multiple_tool_calls",
    "chatToolMode": "tool_choice",
}
_EXTRA_OPTION_KEYS = frozenset({"topK", "additionalProperties"})
_TOOL_KEYS: dict[str, frozenset[str]] = {
    "function": frozenset({"kind", "name", "description", "bindings", "parameters", "strict", "approvalMode"}),
    "mcp": frozenset(
        {
            "kind",
            "name",
            "description",
            "bindings",
            "url",
            "connection",
            "serverName",
            "serverDescription",
            "approvalMode",
            "allowedTools",
        }
    ),
}
_HOSTED_TOOLS = frozenset({"web_search", "file_search", "code_interpreter", "openapi", "custom"})


class _Reader:
    """Reads one definition: evaluates ``=`` expressions and turns mistakes into errors naming the line."""

    def __init__(self, source: str | None, *, safe_mode: bool) -> None:
        self.source = source
        self.safe_mode = safe_mode

    def fail(self, where: Any, key: str | int | None, message: str) -> DeclarativeLoaderError:
        return DeclarativeLoaderError(message, source=locate(where) or self.source, line=line_of(where, key))

    def check_keys(self, mapping: Mapping[str, Any], allowed: Collection[str], what: str) -> None:
        for key in mapping:
            if key not in allowed:
                raise self.fail(mapping, key, f"unknown key {key!r} in {what}; expected one of {sorted(allowed)}")

    def mapping(self, parent: Mapping[str, Any], key: str, what: str) -> Mapping[str, Any] | None:
        value = parent.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(parent, key, f"{what} must be a mapping, got {type(value).__name__}")
        return cast("Mapping[str, Any]", value)

    def value(self, parent: Mapping[str, Any], key: str, kind: type | tuple[type, ...] = str) -> Any:
        value = parent.get(key)
        if is_expression(value):
            value = self.expression(cast(str, value), parent, key)
        if value is not None and not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.fail(parent, key, f"{key!r} must be {names}, got {type(value).__name__}")
        return value

    def expression(self, text: str, parent: Mapping[str, Any], key: str) -> Any:
        try:
            names = names_in(text)
        except ExpressionError as e:
            raise self.fail(parent, key, str(e)) from e
        if "Env" in names and self.safe_mode:
            raise self.fail(
                parent,
                key,
                f"{text!r} reads the environment, which safe_mode=True forbids; pass the value from code, "
                "or AgentFactory(safe_mode=False) if you trust this file.",
            )
        unknown = names - {"Env"}
        if unknown:
            raise self.fail(parent, key, f"{text!r} uses {sorted(unknown)}; agent definitions can only read Env.")

        def lookup(path: tuple[str, ...]) -> Any:
            if len(path) != 2:
                raise ExpressionError(f"use Env.NAME, got {'.'.join(path)!r}")
            return os.environ.get(path[1])

        try:
            return evaluate(text, lookup)
        except ExpressionError as e:
            raise self.fail(parent, key, str(e)) from e


class AgentFactory:
    """Build agents from declarative YAML (``kind: Prompt``) definitions: a file, a YAML string or a dict.

    Args:
        client: The chat client for definitions without ``model.id`` (and the fallback when none is named).
        bindings: Functions the definition's ``kind: function`` tools may bind to, by name.
        allowed_imports: Import strings (``"pkg.module:function"``, or ``"pkg.module"`` for any public
            function of it) a tool binding may name; nothing else is ever imported for a tool.
        mcp_tools: MCP tools (``MCPStreamableHTTPTool``, ``MCPStdioTool``) a ``kind: mcp`` tool may use, by name.
        allowed_mcp_urls: URL prefixes a ``kind: mcp`` tool may connect to when not in ``mcp_tools``.
        allowed_endpoints: URL prefixes a model ``connection.endpoint`` may name (any, with ``safe_mode=False``).
        connections: Constructor arguments for ``connection: {kind: reference, name: ...}``, by name.
        client_kwargs: Extra constructor arguments for every client the factory creates.
        additional_mappings: More ``provider[.apiType]`` entries (see ``PROVIDER_TYPE_OBJECT_MAPPING``).
        default_provider: The provider of a ``model`` that names none.
        safe_mode: When true (the default), ``=Env.NAME`` expressions are refused.

    Example:
        ```python
        from agentnb.declarative import AgentFactory
        from agentnb.local import ToolCallingChatClient

        def get_weather(location: str) -> str:
            return f"Sunny in {location}."

        factory = AgentFactory(client=ToolCallingChatClient(), bindings={"get_weather": get_weather})
        agent = factory.create_agent_from_yaml('''
        kind: Prompt
        name: Weather
        instructions: Answer with the tools.
        tools:
          - kind: function
            name: get_weather
            description: Get the weather.
        ''')
        print((await agent.run("Weather in Paris?")).text)
        ```
    """

    def __init__(
        self,
        *,
        client: BaseChatClient[Any] | None = None,
        bindings: Mapping[str, Callable[..., Any]] | None = None,
        allowed_imports: Collection[str] | None = None,
        mcp_tools: Mapping[str, Any] | None = None,
        allowed_mcp_urls: Collection[str] | None = None,
        allowed_endpoints: Collection[str] | None = None,
        connections: Mapping[str, Mapping[str, Any]] | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
        additional_mappings: Mapping[str, ProviderTypeMapping] | None = None,
        default_provider: str = "OpenAI",
        safe_mode: bool = True,
    ) -> None:
        if any(isinstance(v, str) for v in (allowed_imports, allowed_mcp_urls, allowed_endpoints)):
            raise TypeError("allowed_imports, allowed_mcp_urls and allowed_endpoints take collections of strings")
        self.client = client
        self.bindings: dict[str, Callable[..., Any]] = dict(bindings or {})
        self.allowed_imports: frozenset[str] = frozenset(allowed_imports or ())
        self.mcp_tools: dict[str, Any] = dict(mcp_tools or {})
        self.allowed_mcp_urls: tuple[str, ...] = tuple(allowed_mcp_urls or ())
        self.allowed_endpoints: tuple[str, ...] = tuple(allowed_endpoints or ())
        self.connections: dict[str, Mapping[str, Any]] = dict(connections or {})
        self.client_kwargs: dict[str, Any] = dict(client_kwargs or {})
        self.additional_mappings: dict[str, ProviderTypeMapping] = dict(additional_mappings or {})
        self.default_provider = default_provider
        self.safe_mode = safe_mode

    # -- entry points ---------------------------------------------------------------------------------------
    def create_agent_from_yaml_path(self, yaml_path: str | Path) -> Agent[Any]:
        """Build the agent a YAML file defines; errors name the file and line."""
        path = Path(yaml_path)
        if not path.is_file():
            raise DeclarativeLoaderError(f"YAML file not found at path: {path}")
        return self._create(path, what="agent")

    def create_agent_from_yaml(self, yaml_str: str) -> Agent[Any]:
        """Build the agent a YAML string defines."""
        if not isinstance(cast(object, yaml_str), str):
            raise TypeError(f"yaml_str must be a str, got {type(yaml_str).__name__}; use create_agent_from_dict")
        return self._create(yaml_str, what="agent")

    def create_agent_from_dict(self, agent_def: Mapping[str, Any]) -> Agent[Any]:
        """Build the agent a dict (parsed YAML or JSON) defines."""
        if not isinstance(cast(object, agent_def), Mapping):
            raise TypeError(f"agent_def must be a mapping, got {type(agent_def).__name__}")
        return self._create(agent_def, what="agent")

    async def create_agent_from_yaml_path_async(self, yaml_path: str | Path) -> Agent[Any]:
        """:meth:`create_agent_from_yaml_path` for async call sites (building needs no I/O but reading)."""
        return self.create_agent_from_yaml_path(yaml_path)

    async def create_agent_from_yaml_async(self, yaml_str: str) -> Agent[Any]:
        """:meth:`create_agent_from_yaml` for async call sites."""
        return self.create_agent_from_yaml(yaml_str)

    async def create_agent_from_dict_async(self, agent_def: Mapping[str, Any]) -> Agent[Any]:
        """:meth:`create_agent_from_dict` for async call sites."""
        return self.create_agent_from_dict(agent_def)

    # -- building ------------------------------------------------------------------------------------------
    def _create(self, value: str | Path | Mapping[str, Any], *, what: str) -> Agent[Any]:
        from .._agents import Agent

        data, text, source = read_definition(value, what=what)
        reader = _Reader(source, safe_mode=self.safe_mode)
        kind = data.get("kind")
        if kind not in ("Prompt", "Agent"):
            raise reader.fail(
                data, "kind" if "kind" in data else None, f"only 'kind: Prompt' agents are supported, got {kind!r}"
            )
        reader.check_keys(data, _AGENT_KEYS, "the agent")
        name = reader.value(data, "name")
        model = reader.mapping(data, "model", "model")
        client = self._client(reader, model)
        options = self._options(reader, model)
        tools = self._tools(reader, data)
        output = reader.mapping(data, "outputSchema", "outputSchema")
        if output is not None:
            options["response_format"] = output_model(output, name=f"{name or 'Agent'}Output")
        agent = Agent(
            client,
            reader.value(data, "instructions"),
            name=name,
            description=reader.value(data, "description"),
            tools=tools or None,
            default_options=options,
        )
        agent.additional_properties["declarative"] = {
            "kind": "agent",
            "source": source,
            "yaml": text,
            "display_name": reader.value(data, "displayName"),
        }
        return agent

    def _client(self, reader: _Reader, model: Mapping[str, Any] | None) -> BaseChatClient[Any]:
        if model is None:
            if self.client is not None:
                return self.client
            raise DeclarativeLoaderError(
                "The definition has no model: pass AgentFactory(client=...) or add model.id and model.provider.",
                source=reader.source,
            )
        reader.check_keys(model, _MODEL_KEYS, "model")
        model_id = reader.value(model, "id")
        provider = reader.value(model, "provider")
        api_type = reader.value(model, "apiType")
        if not model_id:
            if self.client is not None:
                return self.client
            raise reader.fail(model, None, "model.id is missing: add it, or pass AgentFactory(client=...).")
        lookup = f"{provider}.{api_type}" if provider and api_type else (provider or self.default_provider)
        mapping = self.additional_mappings.get(lookup) or PROVIDER_TYPE_OBJECT_MAPPING.get(lookup)
        if mapping is None:
            known = sorted({*PROVIDER_TYPE_OBJECT_MAPPING, *self.additional_mappings})
            raise ProviderLookupError(
                f"Unsupported provider type {lookup!r}; agentnb knows {known}. Pass AgentFactory(client=...) "
                "without model.id, or additional_mappings=.",
                source=reader.source,
                line=line_of(model, "provider" if provider else "id"),
            )
        kwargs: dict[str, Any] = dict(self.client_kwargs)
        connection = reader.mapping(model, "connection", "model.connection")
        if connection is not None:
            kwargs.update(self._connection(reader, connection, mapping))
        kwargs[mapping["model_field"]] = model_id
        try:
            module = importlib.import_module(mapping["package"])
            client_class = getattr(module, mapping["name"])
        except (ImportError, AttributeError) as e:
            raise ProviderLookupError(
                f"The client for {lookup!r} ({mapping['package']}.{mapping['name']}) is not available: {e}",
                source=reader.source,
                line=line_of(model, "provider" if provider else "id"),
            ) from e
        return cast("BaseChatClient[Any]", client_class(**kwargs))

    def _connection(
        self, reader: _Reader, connection: Mapping[str, Any], mapping: ProviderTypeMapping
    ) -> dict[str, Any]:
        reader.check_keys(connection, _CONNECTION_KEYS, "connection")
        kind = str(reader.value(connection, "kind") or "").lower()
        kwargs: dict[str, Any] = {}
        if kind in ("key", "apikey"):
            api_key = reader.value(connection, "key") or reader.value(connection, "apiKey")
            if api_key:
                if not mapping["api_key_field"]:
                    raise reader.fail(connection, "kind", f"{mapping['name']} takes no API key.")
                kwargs[mapping["api_key_field"]] = api_key
        elif kind == "reference":
            name = reader.value(connection, "name")
            if name not in self.connections:
                raise reader.fail(
                    connection,
                    "name",
                    f"connection {name!r} is not one of the connections passed to AgentFactory "
                    f"(have {sorted(self.connections)})",
                )
            kwargs.update(self.connections[name])
        elif kind not in ("remote", "anonymous"):
            raise reader.fail(connection, "kind", f"unknown connection kind {kind!r}; use key, remote, reference")
        endpoint = reader.value(connection, "endpoint")
        if endpoint:
            if self.safe_mode and not any(str(endpoint).startswith(p) for p in self.allowed_endpoints):
                raise reader.fail(
                    connection,
                    "endpoint",
                    f"the model endpoint {endpoint!r} is not covered by allowed_endpoints=; in safe mode a file "
                    "cannot send model traffic to a URL the caller did not allow.",
                )
            if not mapping["endpoint_field"]:
                raise reader.fail(connection, "endpoint", f"{mapping['name']} takes no endpoint.")
            kwargs[mapping["endpoint_field"]] = endpoint
        return kwargs

    def _options(self, reader: _Reader, model: Mapping[str, Any] | None) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if model is None:
            return options
        raw = reader.mapping(model, "options", "model.options")
        if raw is None:
            return options
        reader.check_keys(raw, {*_OPTION_KEYS, *_EXTRA_OPTION_KEYS}, "model.options")
        for key, option in _OPTION_KEYS.items():
            if key in raw:
                value = reader.value(raw, key, (int, float, str, bool, list))
                options[option] = value
        extra: dict[str, Any] = {}
        if "topK" in raw:
            extra["top_k"] = reader.value(raw, "topK", int)
        additional = reader.mapping(raw, "additionalProperties", "model.options.additionalProperties")
        if additional:
            extra.update(additional)
        if extra:
            options["additional_properties"] = extra
        return options

    # -- tools ---------------------------------------------------------------------------------------------
    def _tools(self, reader: _Reader, data: Mapping[str, Any]) -> list[Any]:
        raw = data.get("tools")
        if raw is None:
            return []
        if not isinstance(raw, Sequence) or isinstance(raw, str):
            raise reader.fail(data, "tools", "tools must be a list")
        tools: list[Any] = []
        for i, item in enumerate(cast(Sequence[Any], raw)):
            if not isinstance(item, Mapping):
                raise reader.fail(raw, i, "each tool must be a mapping with a kind")
            spec = cast("Mapping[str, Any]", item)
            kind = spec.get("kind")
            if kind == "function":
                tools.append(self._function_tool(reader, spec))
            elif kind == "mcp":
                tools.append(self._mcp_tool(reader, spec))
            elif kind in _HOSTED_TOOLS:
                raise reader.fail(
                    spec, "kind", f"tool kind {kind!r} is a provider-hosted tool agentnb does not run; use a function"
                )
            else:
                raise reader.fail(spec, "kind" if "kind" in spec else None, f"unknown tool kind {kind!r}")
        return tools

    def _function_tool(self, reader: _Reader, spec: Mapping[str, Any]) -> Any:
        from .._tools import FunctionTool

        reader.check_keys(spec, _TOOL_KEYS["function"], "a function tool")
        name = reader.value(spec, "name")
        if not name:
            raise reader.fail(spec, None, "a function tool needs a name")
        targets = self._binding_targets(reader, spec, name)
        func = None
        for target in targets:
            func = self.bindings.get(target) or self._allowed_import(reader, spec, target)
            if func is not None:
                break
        if func is None:
            raise reader.fail(
                spec,
                "bindings" if "bindings" in spec else "name",
                f"tool {name!r} is bound to {targets}, which is not in bindings= (have {sorted(self.bindings)}) "
                "nor an import string listed in allowed_imports=.",
            )
        parameters = reader.mapping(spec, "parameters", "parameters")
        schema = properties_to_json_schema(parameters, what=f"tool {name!r}") if parameters is not None else None
        if schema is not None and spec.get("strict") is True:
            schema["additionalProperties"] = False
        approval = reader.value(spec, "approvalMode")
        approval_mode = _approval_mode(reader, spec, approval)
        return FunctionTool(
            func,
            name=name,
            description=reader.value(spec, "description"),
            input_model=schema,
            approval_mode=approval_mode,
        )

    def _binding_targets(self, reader: _Reader, spec: Mapping[str, Any], name: str) -> list[str]:
        raw = spec.get("bindings")
        if raw is None:
            return [name]
        targets: list[str] = []
        if isinstance(raw, Mapping):
            for key, value in cast("Mapping[str, Any]", raw).items():
                targets.append(key)
                if isinstance(value, str) and value != key:
                    targets.append(value)
        elif isinstance(raw, Sequence) and not isinstance(raw, str):
            for i, binding in enumerate(cast(Sequence[Any], raw)):
                if not isinstance(binding, Mapping):
                    raise reader.fail(raw, i, "each binding must be a mapping with a name")
                mapping = cast("Mapping[str, Any]", binding)
                reader.check_keys(mapping, ("name", "input"), "a binding")
                for key in ("name", "input"):
                    if isinstance(mapping.get(key), str):
                        targets.append(mapping[key])
        else:
            raise reader.fail(spec, "bindings", "bindings must be a mapping or a list")
        return targets

    def _allowed_import(self, reader: _Reader, spec: Mapping[str, Any], target: str) -> Callable[..., Any] | None:
        if ":" not in target:
            return None
        module_name, _, attr = target.partition(":")
        if target not in self.allowed_imports and module_name not in self.allowed_imports:
            raise reader.fail(
                spec,
                "bindings",
                f"{target!r} is not in allowed_imports=; the factory imports only what the caller lists.",
            )
        if not attr.isidentifier() or attr.startswith("_"):
            raise reader.fail(spec, "bindings", f"{target!r} must name a public function: 'module:function'")
        try:
            found = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as e:
            raise reader.fail(spec, "bindings", f"cannot import {target!r}: {e}") from e
        if not callable(found):
            raise reader.fail(spec, "bindings", f"{target!r} is not callable")
        return cast("Callable[..., Any]", found)

    def _mcp_tool(self, reader: _Reader, spec: Mapping[str, Any]) -> Any:
        reader.check_keys(spec, _TOOL_KEYS["mcp"], "an mcp tool")
        name = reader.value(spec, "name") or reader.value(spec, "serverName")
        if not name:
            raise reader.fail(spec, None, "an mcp tool needs a name")
        allowed = reader.value(spec, "allowedTools", list)
        approval = _mcp_approval(reader, spec)
        if name in self.mcp_tools:
            tool = self.mcp_tools[name]
            if allowed is not None:
                tool.allowed_tools = set(allowed)
            return tool
        url = reader.value(spec, "url")
        if not url:
            raise reader.fail(spec, "name", f"mcp tool {name!r} is not in mcp_tools= and has no url")
        if not any(url.startswith(prefix) for prefix in self.allowed_mcp_urls):
            raise reader.fail(
                spec,
                "url",
                f"mcp tool {name!r} points at {url!r}, which no allowed_mcp_urls= prefix covers; pass the "
                "server in mcp_tools= or allow its URL.",
            )
        headers: dict[str, str] = {}
        connection = reader.mapping(spec, "connection", "connection")
        if connection is not None:
            reader.check_keys(connection, _CONNECTION_KEYS, "connection")
            key = reader.value(connection, "key") or reader.value(connection, "apiKey")
            if key:
                headers["Authorization"] = f"Bearer {key}"
        from ..mcp import MCPStreamableHTTPTool

        return MCPStreamableHTTPTool(
            name.replace(" ", "_"),
            url,
            headers=headers or None,
            allowed_tools=allowed,
            approval_mode=approval,
            description=reader.value(spec, "description"),
        )


def _approval_mode(reader: _Reader, spec: Mapping[str, Any], approval: Any) -> Any:
    if approval in (None, "never", "never_require"):
        return "never_require"
    if approval in ("always", "always_require"):
        return "always_require"
    raise reader.fail(spec, "approvalMode", f"approvalMode must be 'always' or 'never', got {approval!r}")


def _mcp_approval(reader: _Reader, spec: Mapping[str, Any]) -> Any:
    raw = spec.get("approvalMode")
    if raw is None or isinstance(raw, str):
        return _approval_mode(reader, spec, reader.value(spec, "approvalMode"))
    if not isinstance(raw, Mapping):
        raise reader.fail(spec, "approvalMode", "approvalMode must be a string or a mapping")
    mode = cast("Mapping[str, Any]", raw)
    reader.check_keys(mode, ("kind", "alwaysRequireApprovalTools", "neverRequireApprovalTools"), "approvalMode")
    kind = mode.get("kind")
    if kind in ("always", "never"):
        return _approval_mode(reader, mode, kind)
    if kind != "specify":
        raise reader.fail(mode, "kind", f"approvalMode kind must be always, never or specify, got {kind!r}")
    return {
        "always_require_approval": list(cast(Sequence[str], mode.get("alwaysRequireApprovalTools") or [])),
        "never_require_approval": list(cast(Sequence[str], mode.get("neverRequireApprovalTools") or [])),
    }
