"""Sequential orchestration: agents take turns in a fixed order, each seeing the whole conversation so far.

The graph is a chain ``sequential_start -> agent 1 -> ... -> agent n -> sequential_end``. The output is the
full conversation (``list[Message]``): the input followed by every agent's messages, in order.

A participant may also be a custom :class:`~agentnb.workflows.Executor` whose handler takes the
conversation (``list[Message]``) and sends the conversation on (``WorkflowContext[list[Message]]``),
for example to summarize, filter or append a message computed in code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._types import Message
from .._agent_executor import AgentExecutorResponse
from .._context import WorkflowContext
from .._executor import Executor
from .._handlers import handler
from ._base import ConversationCtx, ConversationStart, OrchestrationBuilder

if TYPE_CHECKING:
    from .._workflow import Workflow

__all__ = ["SequentialBuilder"]

START_ID = "sequential_start"
END_ID = "sequential_end"


class ConversationInput(ConversationStart):
    """The start of a chain: sends the workflow input on as a conversation (``list[Message]``)."""

    async def start(self, conversation: list[Message], ctx: ConversationCtx) -> None:
        await ctx.send_message(conversation)


class _SequentialEnd(Executor):
    """Yields the conversation the last participant passed on."""

    @handler
    async def finish(self, conversation: list[Message], ctx: WorkflowContext[list[Message], list[Message]]) -> None:
        await ctx.yield_output(list(conversation))

    @handler
    async def finish_response(
        self, last: AgentExecutorResponse, ctx: WorkflowContext[list[Message], list[Message]]
    ) -> None:
        await ctx.yield_output(list(last.full_conversation or last.agent_response.messages))


class SequentialBuilder(OrchestrationBuilder):
    """Build a workflow in which agents answer one after another, each continuing the conversation.

    Args:
        participants: The agents, in speaking order (each needs a unique ``name``); custom executors taking
            and sending ``list[Message]`` may stand between them.
        **options: ``checkpoint_storage``, ``name``, ``description``, ``run_store``,
            ``intermediate_outputs`` (see :class:`OrchestrationOptions`).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.workflows import SequentialBuilder

        writer = Agent(ScriptedChatClient(["Roses are red."]), name="writer")
        editor = Agent(ScriptedChatClient(["Roses are red, violets are blue."]), name="editor")
        workflow = SequentialBuilder(participants=[writer, editor]).build()
        conversation = (await workflow.run("Write a poem")).get_outputs()[0]
        [m.author_name for m in conversation]  # [None, 'writer', 'editor']
        ```
    """

    _RESERVED = (START_ID, END_ID)
    _ALLOW_EXECUTORS = True

    def build(self) -> Workflow:
        """Build the chain as an ordinary :class:`~agentnb.workflows.Workflow`."""
        start = ConversationInput(START_ID)
        end = _SequentialEnd(END_ID)
        executors = [
            p if isinstance(p, Executor) else self._participant(p, send_conversation=True) for p in self.participants
        ]
        builder = self._workflow_builder(
            start, output_from=[end], participants=executors, max_iterations=len(executors) + 4
        )
        builder.add_chain([start, *executors, end])
        return builder.build()
