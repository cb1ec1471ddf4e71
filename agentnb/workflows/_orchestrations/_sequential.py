"""Sequential orchestration: agents take turns in a fixed order, each seeing the whole conversation so far.

The graph is a chain ``sequential_start -> participant 1 -> ... -> participant n``. As in the reference, the
workflow's output is what the last participant yields: an agent's ``AgentResponse`` (its reply only, not the
conversation), or its ``AgentResponseUpdate``s when the run streams. Earlier participants' turns are not
published unless selected (``output_from=``, ``intermediate_output_from=``, or ``intermediate_outputs=True``);
each agent still sees the whole conversation, passed on as an ``AgentExecutorResponse``.

A participant may also be a custom :class:`~agentnb.workflows.Executor` taking the conversation: an
``AgentExecutorResponse`` (what an agent before it sends, as in the reference) or a ``list[Message]`` (agents
then send it the conversation as a list). It sends the conversation on (``WorkflowContext[list[Message]]``), or,
as the last participant, yields the workflow's output itself; when a last custom executor sends instead, a
``sequential_end`` node yields the conversation's last message as an ``AgentResponse``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import Never

from ..._types import AgentResponse, Message
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
    """Yields the last message of the conversation a custom last participant sent on, as its reply."""

    @handler
    async def finish(self, conversation: list[Message], ctx: WorkflowContext[Never, AgentResponse]) -> None:
        await ctx.yield_output(AgentResponse(messages=conversation[-1:]))

    @handler
    async def finish_response(self, last: AgentExecutorResponse, ctx: WorkflowContext[Never, AgentResponse]) -> None:
        await ctx.yield_output(last.agent_response)


def _takes_agent_responses(executor: Executor) -> bool:
    return executor.accepts(AgentExecutorResponse)


class SequentialBuilder(OrchestrationBuilder):
    """Build a workflow in which agents answer one after another, each continuing the conversation.

    Args:
        participants: The agents, in speaking order (each needs a unique ``name``); custom executors taking
            and sending ``list[Message]`` may stand between them.
        **options: ``checkpoint_storage``, ``name``, ``description``, ``run_store``, ``output_from``,
            ``intermediate_output_from``, ``intermediate_outputs`` (see :class:`OrchestrationOptions`).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.workflows import SequentialBuilder

        writer = Agent(ScriptedChatClient(["Roses are red."]), name="writer")
        editor = Agent(ScriptedChatClient(["Roses are red, violets are blue."]), name="editor")
        workflow = SequentialBuilder(participants=[writer, editor]).build()
        reply = (await workflow.run("Write a poem")).get_outputs()[0]  # the last agent's AgentResponse
        reply.text  # 'Roses are red, violets are blue.'

        ```
    """

    _RESERVED = (START_ID, END_ID)
    _ALLOW_EXECUTORS = True
    _INTERMEDIATE_OUTPUTS = False

    def build(self) -> Workflow:
        """Build the chain as an ordinary :class:`~agentnb.workflows.Workflow`."""
        start = ConversationInput(START_ID)
        executors: list[Executor] = []
        for index, p in enumerate(self.participants):
            if isinstance(p, Executor):
                executors.append(p)
                continue
            after = self.participants[index + 1] if index + 1 < len(self.participants) else None
            # Agents pass on an AgentExecutorResponse (the reference's shape); a custom executor that takes
            # only a list of messages gets the conversation as a list.
            as_list = isinstance(after, Executor) and not _takes_agent_responses(after)
            executors.append(self._participant(p, send_conversation=as_list))
        last = executors[-1]
        chain: list[Executor] = [start, *executors]
        default_outputs = [last] if last.workflow_output_types else []  # only what declares that it yields
        if isinstance(self.participants[-1], Executor) and last.output_types:
            end = _SequentialEnd(END_ID)  # a custom last participant that sends: its conversation ends here
            chain.append(end)
            default_outputs.append(end)
        builder = self._workflow_builder(
            start, output_from=default_outputs, participants=executors, max_iterations=len(executors) + 4
        )
        builder.add_chain(chain)
        return builder.build()
