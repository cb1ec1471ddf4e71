"""Provider-hosted tools: what a client offers when the provider itself runs code, searches or draws.

A client that supports a hosted tool has a ``get_*_tool`` static method returning the provider's tool
declaration (a dict). Pass that declaration in ``tools=`` beside ``@tool`` functions: the function loop sends
it to the provider untouched, and the provider's calls and results come back as typed contents
(``code_interpreter_tool_call``, ``search_tool_result``, ``image_generation_tool_result``, ...).
Check support with ``isinstance(client, SupportsWebSearchTool)``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = [
    "SupportsCodeInterpreterTool",
    "SupportsFileSearchTool",
    "SupportsImageGenerationTool",
    "SupportsMCPTool",
    "SupportsShellTool",
    "SupportsWebSearchTool",
]


@runtime_checkable
class SupportsCodeInterpreterTool(Protocol):
    """A client whose provider runs code in a sandbox of its own.

    Example:
        ```python
        from agentnb import Agent, SupportsCodeInterpreterTool
        from agentnb.openai import OpenAIChatClient

        client = OpenAIChatClient(api_key="sk-test")
        if isinstance(client, SupportsCodeInterpreterTool):
            agent = Agent(client, tools=[client.get_code_interpreter_tool()])
        ```
    """

    @staticmethod
    def get_code_interpreter_tool(**kwargs: Any) -> Any:
        """The provider's code interpreter declaration, ready for ``tools=``."""
        ...


@runtime_checkable
class SupportsWebSearchTool(Protocol):
    """A client whose provider searches the web and cites what it found.

    Example:
        ```python
        from agentnb import SupportsWebSearchTool
        from agentnb.openai import OpenAIChatClient

        isinstance(OpenAIChatClient(api_key="sk-test"), SupportsWebSearchTool)  # True
        ```
    """

    @staticmethod
    def get_web_search_tool(**kwargs: Any) -> Any:
        """The provider's web search declaration, ready for ``tools=``."""
        ...


@runtime_checkable
class SupportsImageGenerationTool(Protocol):
    """A client whose provider generates images during a response.

    Example:
        ```python
        from agentnb import SupportsImageGenerationTool
        from agentnb.openai import OpenAIChatClient

        isinstance(OpenAIChatClient(api_key="sk-test"), SupportsImageGenerationTool)  # True
        ```
    """

    @staticmethod
    def get_image_generation_tool(**kwargs: Any) -> Any:
        """The provider's image generation declaration, ready for ``tools=``."""
        ...


@runtime_checkable
class SupportsMCPTool(Protocol):
    """A client whose provider calls a remote MCP server itself (for a local server, use ``agentnb.mcp``).

    Example:
        ```python
        from agentnb import SupportsMCPTool
        from agentnb.openai import OpenAIChatClient

        tool = OpenAIChatClient.get_mcp_tool(name="docs", url="https://mcp.example.com/mcp")
        ```
    """

    @staticmethod
    def get_mcp_tool(**kwargs: Any) -> Any:
        """The provider's hosted MCP declaration (``name=`` and ``url=`` at least), ready for ``tools=``."""
        ...


@runtime_checkable
class SupportsFileSearchTool(Protocol):
    """A client whose provider searches vector stores of uploaded files.

    Example:
        ```python
        from agentnb.openai import OpenAIChatClient

        tool = OpenAIChatClient.get_file_search_tool(vector_store_ids=["vs_123"])
        ```
    """

    @staticmethod
    def get_file_search_tool(**kwargs: Any) -> Any:
        """The provider's file search declaration, ready for ``tools=``."""
        ...


@runtime_checkable
class SupportsShellTool(Protocol):
    """A client whose provider runs shell commands in a container of its own.

    Example:
        ```python
        from agentnb.openai import OpenAIChatClient

        tool = OpenAIChatClient.get_shell_tool()
        ```
    """

    @staticmethod
    def get_shell_tool(**kwargs: Any) -> Any:
        """The provider's shell declaration, ready for ``tools=``."""
        ...
