"""A non-interactive stand-in for the harness samples' ``console`` package (the reference's Textual TUI).

The reference's harness samples hand their agent to ``console.run_agent_async`` and let a Textual app drive
it. This package keeps that package's entry points and the behaviour the samples rely on, as plain text:
each line the user types is read with ``input()`` (the parity test scripts them), each turn streams through
``agent.run(..., stream=True)``, and what the reference's observers show is printed:

- ``/exit``, ``/mode [name]`` and ``/todos`` as the reference's command handlers answer them;
- tool calls and their results, and each tool approval request as a question with the reference's four
  choices (approve once, always approve the tool, always approve it with these arguments, deny);
- in plan mode (``build_observers_with_planning``) the turn asks for a ``PlanningResponse`` through
  ``response_format`` and turns it into clarification questions or a plan to approve, whose approval switches
  the session to execute mode and answers ``Approved``;
- the token usage of each turn against the context budgets the sample passes.

A question is answered by the choice's number or its text; any other text is the user's own answer.
It is not a port: no file of the reference's console is reproduced here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agentnb import (
    AgentModeProvider,
    Message,
    TodoProvider,
    create_always_approve_tool_response,
    create_always_approve_tool_with_arguments_response,
    get_agent_mode,
    set_agent_mode,
)

__all__ = ["ConsoleObserver", "build_default_observers", "build_observers_with_planning", "run_agent_async"]

APPROVE_ONCE = "Approve this call"
ALWAYS_TOOL = "Always approve this tool (any arguments)"
ALWAYS_TOOL_ARGS = "Always approve this tool with these arguments"
DENY = "Deny"
APPROVE_PLAN = "Approve and switch to execute mode"


class PlanningResponseType(str, Enum):
    CLARIFICATION = "clarification"
    APPROVAL = "approval"


class PlanningQuestion(BaseModel):
    message: str = Field(description="The question to clarify, or for an approval the plan to approve.")
    choices: list[str] | None = Field(default=None, description="Options for a clarification; null for approvals.")


class PlanningResponse(BaseModel):
    """What the agent answers in plan mode: questions to clarify, or a plan to approve."""

    type: PlanningResponseType = Field(description="'clarification' to ask the user; 'approval' to ask to execute.")
    questions: list[PlanningQuestion] = Field(description="The questions, or exactly one plan summary to approve.")


class _Screen:
    """What is printed: streamed text stays on its line until something else is shown."""

    streaming = False

    @classmethod
    def say(cls, text: str) -> None:
        cls.end_stream()
        print(text)

    @classmethod
    def end_stream(cls) -> None:
        if cls.streaming:
            print()
            cls.streaming = False


say = _Screen.say


@dataclass
class Question:
    prompt: str
    choices: list[str]
    answer: Any  # (selection: str) -> Message | None


def ask(question: Question) -> str:
    say(question.prompt)
    for number, choice in enumerate(question.choices, 1):
        say(f"   {number}. {choice}")
    typed = input("   > ").strip()
    if typed.isdigit() and 1 <= int(typed) <= len(question.choices):
        return question.choices[int(typed) - 1]
    return typed


class ConsoleObserver:
    """Sees each turn's options, updates and end; may return questions for the user."""

    def configure_run_options(self, options: dict[str, Any], agent: Any, session: Any) -> None:
        return None

    def on_update(self, update: Any, session: Any) -> None:
        return None

    def on_stream_complete(self, session: Any) -> list[Question]:
        return []


class TextOutputObserver(ConsoleObserver):
    """Prints text as it streams, one line per message (the agent's, or the loop's reminder to it)."""

    def __init__(self) -> None:
        self.current: tuple[Any, Any] | None = None

    def on_update(self, update: Any, session: Any) -> None:
        if not update.text:
            return
        key = (update.role, update.message_id)
        # A user-role update is a whole message (the loop's reminder): each gets its own line.
        if key != self.current or update.role == "user" or not _Screen.streaming:
            _Screen.end_stream()
            print("Agent: " if update.role in (None, "assistant") else f"[{update.role}] ", end="")
            self.current = key
        print(update.text, end="")
        _Screen.streaming = True

    def on_stream_complete(self, session: Any) -> list[Question]:
        _Screen.end_stream()
        self.current = None
        return []


class ToolCallDisplayObserver(ConsoleObserver):
    def on_update(self, update: Any, session: Any) -> None:
        for content in update.contents:
            if content.type == "function_call":
                arguments = content.arguments if isinstance(content.arguments, str) else json.dumps(content.arguments)
                say(f"🔧 {content.name}({arguments})")
            elif content.type == "function_result":
                result = content.result if content.exception is None else f"error: {content.exception}"
                first = str(result).strip().splitlines()[0] if str(result).strip() else ""
                say(f"   └─ {first}")


class ToolApprovalObserver(ConsoleObserver):
    def __init__(self) -> None:
        self.requests: list[Any] = []

    def on_update(self, update: Any, session: Any) -> None:
        # agentnb streams a request its approval rules answered too, followed by the answer (the reference
        # holds such requests back): only the ones still unanswered at the end become questions.
        for content in update.contents:
            if content.type == "function_approval_request":
                self.requests.append(content)
            elif content.type == "function_approval_response":
                self.requests = [r for r in self.requests if r.id != content.id]

    def on_stream_complete(self, session: Any) -> list[Question]:
        requests, self.requests = self.requests, []
        for request in requests:
            say(f"⚠️ Approval needed: {request.function_call.name}")
        return [self._question(request) for request in requests]

    @staticmethod
    def _question(request: Any) -> Question:
        def answer(selection: str) -> Message:
            if selection == DENY:
                response, label = request.to_function_approval_response(approved=False), "❌ Denied"
            elif selection == ALWAYS_TOOL:
                response = create_always_approve_tool_response(request, reason="User chose to always approve this tool")
                label = "✅ Always approved (any args)"
            elif selection == ALWAYS_TOOL_ARGS:
                response = create_always_approve_tool_with_arguments_response(
                    request, reason="User chose to always approve this tool with these arguments"
                )
                label = "✅ Always approved (these args)"
            else:
                response, label = request.to_function_approval_response(approved=True), "✅ Approved"
            say(f"   └─ {label}")
            return Message(role="user", contents=[response])

        prompt = f"🔐 Tool approval: {request.function_call.name}"
        return Question(prompt, [APPROVE_ONCE, ALWAYS_TOOL, ALWAYS_TOOL_ARGS, DENY], answer)


class UsageDisplayObserver(ConsoleObserver):
    """Prints each turn's tokens; the budgets are set by ``run_agent_async``."""

    def __init__(self) -> None:
        self.context_window: int | None = None
        self.output: int | None = None
        self.usage: dict[str, int] = {}

    def on_update(self, update: Any, session: Any) -> None:
        for content in update.contents:
            if content.type == "usage" and content.usage_details:
                for key in ("input_token_count", "output_token_count"):
                    self.usage[key] = self.usage.get(key, 0) + (content.usage_details.get(key) or 0)

    def record(self, usage: dict[str, Any] | None) -> None:
        if usage and not self.usage:
            self.usage = {k: usage.get(k) or 0 for k in ("input_token_count", "output_token_count")}

    def on_stream_complete(self, session: Any) -> list[Question]:
        usage, self.usage = self.usage, {}
        if not usage:
            return []
        used_in, used_out = usage.get("input_token_count", 0), usage.get("output_token_count", 0)
        input_budget = (
            self.context_window - self.output if self.context_window is not None and self.output is not None else None
        )
        say(
            f"📊 Tokens — input: {_count(used_in, input_budget)} | output: {_count(used_out, self.output)}"
            f" | total: {_count(used_in + used_out, self.context_window)}"
        )
        return []


def _count(count: int, budget: int | None) -> str:
    return f"{count:,}/{budget:,} ({count / budget * 100:.1f}%)" if budget else f"{count:,}"


class PlanningOutputObserver(ConsoleObserver):
    """Plan mode asks for a ``PlanningResponse``; execute mode prints the text as it is."""

    def __init__(self, mode_provider: AgentModeProvider, plan_mode: str, execute_mode: str) -> None:
        self.mode_provider = mode_provider
        self.plan_mode, self.execute_mode = plan_mode, execute_mode
        self.text: list[str] = []
        self.streamed = TextOutputObserver()
        self.planning = False

    def _mode(self, session: Any) -> str:
        provider = self.mode_provider
        return get_agent_mode(
            session,
            source_id=provider.source_id,
            default_mode=provider.default_mode,
            available_modes=provider.available_modes,
        )

    def configure_run_options(self, options: dict[str, Any], agent: Any, session: Any) -> None:
        self.planning = self._mode(session).lower() == self.plan_mode.lower()
        if self.planning:
            options["response_format"] = PlanningResponse

    def on_update(self, update: Any, session: Any) -> None:
        if not self.planning:
            self.streamed.on_update(update, session)
        elif update.text:
            self.text.append(update.text)

    def on_stream_complete(self, session: Any) -> list[Question]:
        if not self.planning:
            return self.streamed.on_stream_complete(session)
        text, self.text = "".join(self.text).strip(), []
        if not text:
            return []
        try:
            planning = PlanningResponse.model_validate_json(text)
        except (ValidationError, ValueError):
            say(f"Agent: {text}")
            return []
        if planning.type is PlanningResponseType.CLARIFICATION:
            return [self._clarify(q) for q in planning.questions]
        if not planning.questions:
            say("(approval response had no content)")
            return []
        return [self._approve(planning.questions[0].message, session)]

    @staticmethod
    def _clarify(question: PlanningQuestion) -> Question:
        def answer(selection: str) -> Message | None:
            if not selection:
                say("   └─ (no answer)")
                return None
            say(f"   └─ {selection}")
            return Message(role="user", contents=[f"Q: {question.message}\nA: {selection}"])

        return Question(f"🔹 {question.message}", list(question.choices or []), answer)

    def _approve(self, plan: str, session: Any) -> Question:
        def answer(selection: str) -> Message:
            say(f"   └─ {selection}")
            if selection == APPROVE_PLAN:
                provider = self.mode_provider
                set_agent_mode(
                    session, self.execute_mode, source_id=provider.source_id, available_modes=provider.available_modes
                )
                say(f"✅ Switched to {self.execute_mode} mode.")
                return Message(role="user", contents=["Approved"])
            return Message(role="user", contents=[selection])

        return Question(f"🔹 {plan}", [APPROVE_PLAN], answer)


def build_default_observers() -> list[ConsoleObserver]:
    """Text, tool calls, usage and tool approvals (no planning)."""
    return [TextOutputObserver(), ToolCallDisplayObserver(), ToolApprovalObserver(), UsageDisplayObserver()]


def build_observers_with_planning(
    agent: Any,
    plan_mode_name: str = "plan",
    execution_mode_name: str = "execute",
    *,
    mode_colors: dict[str, str] | None = None,
) -> list[ConsoleObserver]:
    """The default observers with plan-mode structured output in place of plain text."""
    provider = next((p for p in agent.context_providers if isinstance(p, AgentModeProvider)), None)
    if provider is None:
        raise ValueError(
            "Planning observers require an AgentModeProvider on the agent. "
            "Use create_harness_agent() or add AgentModeProvider to context_providers."
        )
    return [
        PlanningOutputObserver(provider, plan_mode_name, execution_mode_name),
        ToolCallDisplayObserver(),
        ToolApprovalObserver(),
        UsageDisplayObserver(),
    ]


async def _command(agent: Any, session: Any, line: str) -> bool:
    """Answer ``/mode`` and ``/todos`` as the reference's handlers do; ``True`` when ``line`` was one."""
    lower = line.lower()
    modes = next((p for p in agent.context_providers if isinstance(p, AgentModeProvider)), None)
    todos = next((p for p in agent.context_providers if isinstance(p, TodoProvider)), None)
    if lower == "/mode" or lower.startswith("/mode "):
        if modes is None:
            say("AgentModeProvider is not available.")
            return True
        parts = line.split(None, 1)
        if len(parts) < 2:
            say(f"Current mode: {modes.get_mode(session)}")
            return True
        try:
            say(f"Switched to {modes.set_mode(session, parts[1].strip())} mode.")
        except ValueError as error:
            say(str(error))
        return True
    if lower == "/todos":
        if todos is None:
            say("TodoProvider is not available.")
            return True
        items = await todos.store.load_items(session, source_id=todos.source_id)
        if not items:
            say("No todos yet.")
            return True
        say("── Todo List ──")
        for item in items:
            description = f" — {item.description}" if item.description else ""
            say(f"[{'✓' if item.is_complete else '○'}] #{item.id} {item.title}{description}")
        return True
    return False


async def _turn(agent: Any, session: Any, observers: list[ConsoleObserver], messages: list[Message]) -> None:
    """Stream turns until no observer has a question whose answer needs another one."""
    while messages:
        options: dict[str, Any] = {}
        for observer in observers:
            observer.configure_run_options(options, agent, session)
        stream = agent.run(messages, stream=True, session=session, options=options)
        try:
            async for update in stream:
                for observer in observers:
                    observer.on_update(update, session)
            final = await stream.get_final_response()
            for observer in observers:
                if isinstance(observer, UsageDisplayObserver):
                    observer.record(final.usage_details)
        except Exception as error:
            say(f"❌ Stream error: {error.__class__.__name__}:\n{error}")
        questions = [q for observer in observers for q in observer.on_stream_complete(session)]
        messages = [m for m in (q.answer(ask(q)) for q in questions) if m is not None]


async def run_agent_async(
    agent: Any,
    *,
    session: Any = None,
    observers: list[ConsoleObserver] | None = None,
    command_handlers: Any = None,
    mode_colors: dict[str, str] | None = None,
    initial_mode: str | None = None,
    placeholder: str = "Type a message and press Enter...",
    title: str = "Harness Console",
    max_context_window_tokens: int | None = None,
    max_output_tokens: int | None = None,
) -> None:
    """Read lines with ``input()`` until ``/exit`` (or the input ends), running a turn for each message."""
    session = session or agent.create_session()
    observers = observers or build_default_observers()
    for observer in observers:
        if isinstance(observer, UsageDisplayObserver):
            observer.context_window, observer.output = max_context_window_tokens, max_output_tokens
    say(title)
    if initial_mode:
        say(f"Mode: {initial_mode}")
    say(placeholder)
    while True:
        try:
            line = input("> ").strip()
        except EOFError:
            break
        if not line:
            continue
        if line.lower() == "/exit":
            say("Goodbye!")
            break
        if await _command(agent, session, line):
            continue
        say(f"You: {line}")
        await _turn(agent, session, observers, [Message(role="user", contents=[line])])
