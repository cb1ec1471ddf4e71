"""Serve an MCP server's sampling requests (``sampling/createMessage``) under the user's control.

A server that samples asks *your* model to write text, on your account and with prompts the server
chose. So nothing is sampled unless the user passed an approval callback that says yes for this
request; a per-session limit and a max-tokens cap bound what an approved server can spend. Denials are
logged with the server's name and the reason, never with the prompt.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentnb._types import Message

from ._content import messages_from_sampling

if TYPE_CHECKING:
    import mcp_types

logger = logging.getLogger("agentnb.mcp")

__all__ = ["SamplingApprovalCallback", "SamplingGate", "SamplingRequest"]


@dataclass(frozen=True)
class SamplingRequest:
    """A server's request to sample the user's model, shown to the approval callback.

    Attributes:
        server: The name of the MCP tool (server) asking.
        messages: The conversation to complete (a leading system message holds the server's system prompt).
        max_tokens: Tokens the reply may use: the server's request, capped by ``sampling_max_tokens``.
        requested_max_tokens: What the server asked for, before the cap.
        temperature: The server's requested temperature, if any.
        stop_sequences: The server's requested stop sequences, if any.
        number: This request's number in the current session (1 for the first).

    Example:
        ```python
        import sys
        from agentnb.local import ScriptedChatClient
        from agentnb.mcp import MCPStdioTool, SamplingRequest

        def approve(request: SamplingRequest) -> bool:
            # Decide from what the server asks; here: short requests only.
            return request.max_tokens <= 500 and len(request.messages) <= 4

        server = MCPStdioTool(
            "demo", sys.executable, args=["-m", "agentnb.mcp.demo_server"],
            client=ScriptedChatClient(["A summary."]), sampling_approval_callback=approve,
        )
        ```
    """

    server: str
    messages: list[Message]
    max_tokens: int
    requested_max_tokens: int
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    number: int = 1
    raw_representation: Any = field(default=None, repr=False, compare=False)


SamplingApprovalCallback = Callable[[SamplingRequest], "bool | Awaitable[bool]"]
"""Decides whether a sampling request may run: return (or resolve to) ``True`` to approve."""


class SamplingGate:
    """The policy between a server's sampling request and the user's chat client.

    Args:
        server: The tool's name (for logs and the request the callback sees).
        approval_callback: Approves each request; without one every request is denied.
        client: The chat client that answers approved requests.
        max_requests: Requests allowed per MCP session; later ones are denied without asking.
        max_tokens: Upper bound on ``max_tokens`` for each approved request.
    """

    def __init__(
        self,
        *,
        server: str,
        approval_callback: SamplingApprovalCallback | None,
        client: Any,
        max_requests: int,
        max_tokens: int,
    ) -> None:
        if max_requests < 0:
            raise ValueError(f"sampling_max_requests must be >= 0, got {max_requests}")
        if max_tokens < 1:
            raise ValueError(f"sampling_max_tokens must be >= 1, got {max_tokens}")
        self.server = server
        self.approval_callback = approval_callback
        self.client = client
        self.max_requests = max_requests
        self.max_tokens = max_tokens
        self.requests_seen = 0
        self.denied = 0

    def new_session(self) -> None:
        """Start counting again for a new MCP session."""
        self.requests_seen = 0

    def _deny(self, reason: str, *, message: str | None = None) -> mcp_types.ErrorData:
        import mcp_types

        self.denied += 1
        logger.warning("MCP server %r: sampling request denied (%s).", self.server, reason)
        return mcp_types.ErrorData(
            code=mcp_types.INVALID_REQUEST, message=message or f"Sampling request denied: {reason}."
        )

    async def __call__(
        self, context: Any, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        """The SDK's sampling callback: check the policy, ask the user, then let the client answer."""
        import mcp_types

        self.requests_seen += 1
        number = self.requests_seen
        if self.client is None:
            self.denied += 1
            logger.warning("MCP server %r: sampling request refused: no chat client was given.", self.server)
            return mcp_types.ErrorData(
                code=mcp_types.INTERNAL_ERROR,
                message="No chat client available to answer sampling requests (pass client=...).",
            )
        if self.approval_callback is None:
            return self._deny("no sampling_approval_callback was given")
        if number > self.max_requests:
            return self._deny(f"limit of {self.max_requests} request(s) per session reached")
        if params.tools:
            return self._deny("sampling with tools is not supported")
        request = SamplingRequest(
            server=self.server,
            messages=messages_from_sampling(params),
            max_tokens=min(params.max_tokens, self.max_tokens),
            requested_max_tokens=params.max_tokens,
            temperature=params.temperature,
            stop_sequences=list(params.stop_sequences) if params.stop_sequences else None,
            number=number,
            raw_representation=params,
        )
        try:
            verdict = self.approval_callback(request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:
            return self._deny(f"the approval callback raised {type(exc).__name__}")
        if verdict is not True:
            return self._deny(
                "the approval callback declined",
                message="Sampling request denied by the 'sampling_approval_callback' (it declined).",
            )
        options: dict[str, Any] = {"max_tokens": request.max_tokens}
        if request.temperature is not None:
            options["temperature"] = request.temperature
        if request.stop_sequences:
            options["stop"] = request.stop_sequences
        try:
            response = await self.client.get_response(request.messages, options=options)
        except Exception as exc:
            logger.warning(
                "MCP server %r: the chat client failed to answer a sampling request (%s).",
                self.server,
                type(exc).__name__,
            )
            return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message="The client's model failed to answer.")
        finish = getattr(response, "finish_reason", None)
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text=response.text),
            model=getattr(response, "model_id", None) or getattr(self.client, "model_id", None) or "unknown",
            stop_reason="maxTokens" if finish == "length" else "endTurn",
        )
