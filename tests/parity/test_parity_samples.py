"""The reference's own samples, ported by changing only their imports and model client, run and checked.

Each case gives the sample's model script (see ``parity_model``) and what the run must print: the lines the
sample documents as its output, in order (a ``re.Pattern`` where the sample's output is random).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import re
import runpy
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import parity_model
import pytest
from parity_model import all_tool_results, call, last_tool_result, sent_text
from regenerate import DATA, PORTS, SAMPLES, check

from agentnb import Content
from agentnb.compaction import find_encoding_file
from agentnb.harness import JudgeVerdict
from agentnb.workflows import GroupChatDecision, MagenticProgressLedger, MagenticTaskLedger

# A local copy of tiktoken's o200k_base (the tiktoken sample must not download it).
_O200K = find_encoding_file("o200k_base")
ENCODINGS = _O200K.parent if _O200K is not None else None


@dataclass
class Case:
    expected: list[str | re.Pattern[str]]
    script: Sequence[Any] | dict[str, Sequence[Any]] = ()
    inputs: list[str] = field(default_factory=list)
    slow: bool = False
    env: dict[str, str] = field(default_factory=dict)
    tree: str | None = None  # a folder of ports the sample reads next to itself (copied whole to run it)
    # Serve an agent on the parity model over A2A on loopback and point A2A_AGENT_HOST at it.
    a2a_agent: bool = False
    # Warnings the sample is expected to raise (``pytest`` turns others into errors), as filterwarnings specs.
    expected_warnings: tuple[str, ...] = ()


def _saw(text: str, reply: str, otherwise: str = "I don't know that.") -> Any:
    """A reply given only when the model was sent ``text`` (so the script checks what the agent passed on)."""

    def answer(messages: list[Any], options: dict[str, Any]) -> str:
        return reply if text in sent_text(messages, options) else otherwise

    return answer


def _tool_then_report(tool_name: str, prefix: str = "Report: ", /, **arguments: Any) -> list[Any]:
    """Two model calls: call a tool, then answer with its result (so the answer proves the tool ran)."""
    return [call(tool_name, **arguments), lambda m, o: prefix + last_tool_result(m)]


def _judge_guess(messages: list[Any], options: dict[str, Any]) -> str:
    """The number judge of the simple-loop sample: compares the guess in the prompt with the target."""
    prompt = messages[-1].text
    target = int(re.search(r"Target: (\d+)", prompt).group(1))  # type: ignore[union-attr]
    guess = int(re.search(r"Guess: (\d+)", prompt).group(1))  # type: ignore[union-attr]
    return "MATCHED" if guess == target else ("ABOVE" if target > guess else "BELOW")


WEATHER_ANSWERS = {
    "Seattle": "Seattle weather today: light rain, 14°C.",
    "London": "London weather tomorrow: showers likely, bring an umbrella.",
    "30°C": "For 30°C weather wear light cotton clothes and a hat.",
}


def _by_query(answers: dict[str, str]) -> Any:
    """A reply chosen by the piece of the user's question it contains."""

    def answer(messages: list[Any], options: dict[str, Any]) -> str:
        asked = messages[-1].text
        return next(reply for piece, reply in answers.items() if piece in asked)

    return answer


CASES: dict[str, Case] = {
    "01-get-started/01_hello_agent.py": Case(
        script=["The capital of France is Paris.", "Honey never spoils."],
        expected=["Agent: The capital of France is Paris.", "Agent (streaming): Honey never spoils."],
    ),
    "01-get-started/02_add_tools.py": Case(
        script=[call("get_weather", location="Seattle"), lambda m, o: f"Forecast: {last_tool_result(m)}"],
        expected=[re.compile(r"Agent: Forecast: The weather in Seattle is (sunny|cloudy|rainy|stormy) with a high")],
    ),
    "01-get-started/03_multi_turn.py": Case(
        script=["Nice to meet you, Alice!", _saw("My name is Alice and I love hiking.", "You are Alice; you hike.")],
        expected=["Agent: Nice to meet you, Alice!", "Agent: You are Alice; you hike."],
    ),
    "01-get-started/04_memory.py": Case(
        script=[
            _saw("You don't know the user's name yet", "It is 3. What is your name?"),
            "Nice to meet you!",
            _saw("The user's name is Alice", "Alice, 2 + 2 = 4."),
        ],
        expected=[
            "Agent: It is 3. What is your name?",
            "Agent: Nice to meet you!",
            "Agent: Alice, 2 + 2 = 4.",
            "[Session State] Stored user name: Alice",
        ],
    ),
    "02-agents/tools/function_tool_with_max_exceptions.py": Case(
        script=[
            call("safe_divide", a=10, b=0),
            "Division by zero is undefined in standard arithmetic.",
            call("safe_divide", a=100, b=0),
            _saw("limit", "Division by zero is undefined, so 100 ÷ 0 has no finite value."),
        ],
        expected=[
            "Step 1: Call divide(10, 0) - tool raises exception",
            "    Tool failed with error: division by zero",
            "Response: Division by zero is undefined in standard arithmetic.",
            "Step 2: Call divide(100, 0) - will refuse to execute due to max_invocation_exceptions",
            "Response: Division by zero is undefined, so 100 ÷ 0 has no finite value.",
            "Number of tool calls attempted: 1",
            "Number of tool calls failed: 1",
        ],
    ),
    "02-agents/tools/function_tool_with_max_invocations.py": Case(
        script=[
            *_tool_then_report("unicorn_function", "Five unicorns summoned: ", times=5),
            call("unicorn_function", times=10),
            _saw("limit", "The unicorn function has reached its maximum invocation limit."),
        ],
        expected=[
            "Step 1: Call unicorn_function",
            "Response: Five unicorns summoned: 🦄🦄🦄🦄🦄✨",
            "Step 2: Call unicorn_function again - will refuse to execute due to max_invocations",
            "Response: The unicorn function has reached its maximum invocation limit.",
            "Number of tool calls attempted: 1",
            "Number of tool calls failed: 0",
        ],
    ),
    "02-agents/tools/function_tool_recover_from_failures.py": Case(
        script=[
            call("safe_divide", a=10, b=0),
            "Division by zero is undefined in standard arithmetic, so 10 ÷ 0 has no meaning.",
            *_tool_then_report("greet", "", name="Bob"),
        ],
        expected=[
            "Step 1: Call divide(10, 0) - tool raises exception",
            "    Tool failed: with error: division by zero",
            "Response: Division by zero is undefined in standard arithmetic, so 10 ÷ 0 has no meaning.",
            "Step 2: Call greet('Bob') - conversation can keep going.",
            "Response: Hello, Bob!",
        ],
    ),
    "02-agents/tools/function_tool_with_kwargs.py": Case(
        script=_tool_then_report("get_weather", "", location="Amsterdam"),
        expected=[
            "Getting weather for user: user_123",
            "Agent: The weather in Amsterdam is cloudy with a high of 15°C.",
        ],
    ),
    "02-agents/tools/function_tool_with_explicit_schema.py": Case(
        script=[
            [call("get_weather", location="Seattle"), call("get_current_time", timezone="America/Los_Angeles")],
            lambda m, o: "Both: " + all_tool_results(m),
        ],
        expected=[
            "User: What is the weather in Seattle and what time is it?",
            re.compile(
                r"Result: Both: The weather in Seattle is 22 degrees celsius\. \| "
                r"The current time in America/Los_Angeles is 20\d\d-"
            ),
        ],
    ),
    "02-agents/tools/tool_in_class.py": Case(
        script=[*_tool_then_report("divide", "Result: ", a=10, b=0), *_tool_then_report("divide", "", a=10, b=0)],
        expected=[
            "Step 1: Call divide(10, 0) - tool returns infinity",
            "Response: Result: 10 / 0 = ∞",
            "Step 2: Call set safe to False and call again",
            re.compile(r"Response: Error: tool 'divide' failed: ZeroDivisionError"),
        ],
    ),
    "02-agents/tools/function_tool_with_session_injection.py": Case(
        script=[
            *_tool_then_report("get_weather", "", location="London"),
            *_tool_then_report("get_weather", "", location="Amsterdam"),
            _saw("Amsterdam", "You asked about London and Amsterdam."),
        ],
        expected=[
            "Agent: The weather in London is cloudy.",
            "Agent: The weather in Amsterdam is cloudy.",
            "Agent: You asked about London and Amsterdam.",
        ],
    ),
    "02-agents/middleware/function_based_middleware.py": Case(
        script=_tool_then_report("get_weather", location="Tokyo"),
        expected=[
            "User: What's the weather like in Tokyo?",
            "[SecurityAgentMiddleware] Security check passed.",
            "[LoggingFunctionMiddleware] About to call function: get_weather.",
            "[LoggingFunctionMiddleware] Function get_weather completed in",
            re.compile(r"Agent: Report: The weather in Tokyo is \w+ with a high of \d+°C\."),
            "[SecurityAgentMiddleware] Security Warning: Detected sensitive information, blocking request.",
            "Agent: No response",
        ],
    ),
    "02-agents/middleware/class_based_middleware.py": Case(
        script=_tool_then_report("get_weather", location="Seattle"),
        expected=[
            "[SecurityAgentMiddleware] Security check passed.",
            "[LoggingFunctionMiddleware] About to call function: get_weather.",
            re.compile(r"Agent: Report: The weather in Seattle is \w+ with a high of \d+°C\."),
            "[SecurityAgentMiddleware] Security Warning: Detected sensitive information, blocking request.",
            "Agent: Detected sensitive information, the request is blocked.",
        ],
    ),
    "02-agents/middleware/decorator_middleware.py": Case(
        script=_tool_then_report("get_current_time", "It is "),
        expected=[
            "User: What time is it?",
            "[Agent MiddlewareTypes] Before agent execution",
            "[Function MiddlewareTypes] Before calling: get_current_time",
            "[Function MiddlewareTypes] After calling: get_current_time",
            "[Agent MiddlewareTypes] After agent execution",
            re.compile(r"Agent: It is Current time is \d\d:\d\d:\d\d"),
        ],
    ),
    "02-agents/middleware/exception_handling_with_middleware.py": Case(
        script=_tool_then_report("unstable_data_service", "Sorry: ", query="user statistics"),
        expected=[
            "User: Get user statistics",
            "[ExceptionHandlingMiddleware] Executing function: unstable_data_service",
            "[ExceptionHandlingMiddleware] Caught TimeoutError: Data service request timed out",
            "Agent: Sorry: Request Timeout: The data service is taking longer than expected to respond.",
        ],
    ),
    "02-agents/middleware/middleware_termination.py": Case(
        script=[
            *_tool_then_report("get_weather", location="Seattle"),
            *_tool_then_report("get_weather", location="Paris"),
        ],
        expected=[
            "[PreTerminationMiddleware] Blocked word 'bad' detected. Terminating request.",
            "Agent: Sorry, I cannot process requests containing 'bad'. Please rephrase your question.",
            "User: What's the weather in Paris?",
            "[PostTerminationMiddleware] Processing request (response count: 0)",
            re.compile(r"Agent: Report: The weather in Paris is"),
            "[PostTerminationMiddleware] Maximum responses (1) reached. Terminating further processing.",
            "Agent: No response (terminated)",
        ],
    ),
    "02-agents/middleware/shared_state_middleware.py": Case(
        script=[
            *_tool_then_report("get_weather", location="New York"),
            *_tool_then_report("get_time", timezone="London"),
            *_tool_then_report("get_weather", location="Tokyo"),
        ],
        expected=[
            "[CallCounter] This is function call #1",
            re.compile(r"Agent: Report: \[Call #1\] The weather in New York"),
            "[CallCounter] This is function call #2",
            "[CallCounter] This is function call #3",
            "Total function calls made: 3",
        ],
    ),
    "02-agents/middleware/session_behavior_middleware.py": Case(
        script=[
            *_tool_then_report("get_weather", location="Tokyo"),
            *_tool_then_report("get_weather", location="London"),
        ],
        expected=[
            "[MiddlewareTypes pre-execution] Session history messages: 0",
            "[MiddlewareTypes post-execution] Updated session messages: 4",
            re.compile(r"Agent: Report: The weather in Tokyo is"),
            "[MiddlewareTypes pre-execution] Session history messages: 4",
            "[MiddlewareTypes post-execution] Updated session messages: 8",
            re.compile(r"Agent: Report: The weather in London is"),
        ],
    ),
    "02-agents/chat_client/require_per_service_call_history_persistence.py": Case(
        script=[call("lookup_weather", location="Seattle"), call("lookup_weather", location="Seattle")],
        expected=[
            "=== Without per-service-call persistence ===",
            "Stored synthesized tool result: True",
            "  1. user: What is the weather in Seattle, and should I bring sunglasses?",
            '  2. assistant: function_call -> lookup_weather({"location":"Seattle"})',
            "  3. tool: function_result -> The weather in Seattle is sunny.",
            "=== With per-service-call persistence ===",
            "Stored synthesized tool result: False",
            "  1. user: What is the weather in Seattle, and should I bring sunglasses?",
            '  2. assistant: function_call -> lookup_weather({"location":"Seattle"})\n\nBoth runs',
        ],
    ),
    "02-agents/context_providers/simple_context_provider.py": Case(
        script={
            "Extract the user's name and age": [
                {"name": None, "age": None},
                {"name": "Ruaidhrí", "age": None},
                {"name": "Ruaidhrí", "age": 20},
            ],
            "": [
                _saw("Ask the user for their name", "Please tell me your name first."),
                "Nice to meet you, Ruaidhrí!",
                _saw("The user's name is Ruaidhrí", "Thanks, Ruaidhrí."),
            ],
        },
        expected=[
            "Assistant: Please tell me your name first.",
            "Assistant: Nice to meet you, Ruaidhrí!",
            "Assistant: Thanks, Ruaidhrí.",
            "MEMORY - User Name: Ruaidhrí",
            "MEMORY - User Age: 20",
        ],
    ),
    "02-agents/conversations/custom_history_provider.py": Case(
        script=["Nice to meet you, Alice!", _saw("I love pizza", "You are Alice and you love pizza.")],
        expected=[
            "User: Hello! My name is Alice and I love pizza.",
            "Agent: Nice to meet you, Alice!",
            "Serialized session: {'type': 'session'",
            "User: What do you remember about me?",
            "Agent: You are Alice and you love pizza.",
        ],
    ),
    "02-agents/conversations/suspend_resume_session.py": Case(
        script=[
            "Hi Alice!",
            _saw("I love pizza", "You are Alice; you love pizza."),
            "Hello again, Alice!",
            _saw("I love pizza", "Alice, pizza lover."),
        ],
        expected=[
            "=== Suspend-Resume Service-Managed Session ===",
            "Agent: Hi Alice!",
            "Agent: You are Alice; you love pizza.",
            "=== Suspend-Resume In-Memory Session ===",
            "Agent: Hello again, Alice!",
            "Serialized session: {'type': 'session'",
            "Agent: Alice, pizza lover.",
        ],
    ),
    "02-agents/middleware/chat_middleware.py": Case(
        script=[
            *_tool_then_report("get_weather", location="Seattle"),
            "I'm well, thanks!",
            *_tool_then_report("get_weather", location="Tokyo"),
            *_tool_then_report("get_weather", location="Madrid"),
        ],
        expected=[
            "User: What's the weather in Seattle?",
            re.compile(r"Final Response: Report: The weather in Seattle is"),
            "[SecurityMiddleware] BLOCKED: Found 'password' in message",
            "[InputObserverMiddleware] Updated: 'What's the weather in Tokyo?' -> 'What's the weather in Madrid?'",
            re.compile(r"Response: Report: The weather in Madrid is"),
            "[SecurityMiddleware] BLOCKED: Found 'secret' in message",
        ],
    ),
    "02-agents/middleware/agent_and_run_level_middleware.py": Case(
        script=[
            *_tool_then_report("get_weather", location="Paris"),
            *_tool_then_report("get_weather", location="Tokyo"),
            *_tool_then_report("get_weather", location="London"),
            *_tool_then_report("get_weather", location="New York"),
            *_tool_then_report("get_weather", location="Sydney"),
        ],
        expected=[
            "[SecurityMiddleware] Security check passed.",
            re.compile(r"Agent: Report: The weather in Paris is"),
            re.compile(r"Agent: Report: The weather in Tokyo is"),
            "[SecurityMiddleware] Security violation detected! Blocking request.",
            "Agent: Request was blocked by security middleware",
            "[FunctionLog] Calling function: get_weather with args: {'location': 'Sydney'}",
            re.compile(r"Agent: Report: The weather in Sydney is"),
        ],
    ),
    "02-agents/conversations/file_history_provider.py": Case(
        script=[
            *_tool_then_report("lookup_weather", location="Seattle"),
            _saw("Seattle is rainy", "Amsterdam is mild; Seattle was rainy."),
        ],
        expected=[
            "=== Run with tool calling ===",
            "Assistant: Report: Seattle is rainy with a high of 13C.",
            "=== Follow-up question ===",
            "Assistant: Amsterdam is mild; Seattle was rainy.",
        ],
    ),
    "03-workflows/parallelism/fan_out_fan_in_edges.py": Case(
        script={
            "researcher": ["Commuters want range."],
            "marketing strategist": ["Ride more, spend less."],
            "legal/compliance": ["Check battery regulations."],
        },
        expected=[
            "=== Final Consolidated Output ===",
            "Research Findings:\nCommuters want range.",
            "Marketing Angle:\nRide more, spend less.",
            "Legal/Compliance Notes:\nCheck battery regulations.",
        ],
    ),
    "03-workflows/agents/custom_agent_executors.py": Case(
        script=["An affordable, fun electric SUV.", _saw("An affordable, fun electric SUV.", "Approved: concise.")],
        expected=["Approved: concise."],
    ),
    "03-workflows/orchestrations/sequential_agents.py": Case(
        script=[
            "Ride farther, spend less.",
            _saw("Ride farther, spend less.", "Clear and catchy."),
        ],
        expected=[
            "===== Final Conversation =====",
            "01 [user]\nWrite a tagline for a budget-friendly eBike.",
            "02 [writer]\nRide farther, spend less.",
            "03 [reviewer]\nClear and catchy.",
        ],
    ),
    "03-workflows/orchestrations/group_chat_simple_selector.py": Case(
        script=["Use a list.", "Verified.", "To clarify: lists keep order.", "Are you sure?", "Yes, lists."],
        expected=[
            "PythonExpert: Use a list.",
            "AnswerVerifier: Verified.",
            "AnswerClarifier: To clarify: lists keep order.",
            "Skeptic: Are you sure?",
            "PythonExpert: Yes, lists.",
        ],
    ),
    "03-workflows/orchestrations/concurrent_custom_aggregator.py": Case(
        script={
            "consolidates multiple domain expert outputs": [
                _saw("researcher:\nUrban demand is high.", "Summary: demand high, pitch savings, mind rules.")
            ],
            "market and product researcher": ["Urban demand is high."],
            "marketing strategist": ["Pitch the savings."],
            "legal/compliance reviewer": ["Mind the rules."],
        },
        expected=["===== Final Consolidated Output =====", "Summary: demand high, pitch savings, mind rules."],
    ),
    "03-workflows/agents/azure_chat_agents_streaming.py": Case(
        script={
            "content writer": ["Drive fun, pay less."],
            "content reviewer": [_saw("Drive fun, pay less.", "Good slogan; make it shorter.")],
        },
        # One output event per update, each naming its agent: the author is printed once, at each change.
        expected=["writer: Drive fun, pay less.\nreviewer: Good slogan; make it shorter."],
    ),
    "03-workflows/agents/sequential_workflow_as_agent.py": Case(
        script={
            "concise copywriter": ["Ride farther, spend less."],
            "thoughtful reviewer": [_saw("Ride farther, spend less.", "Clear and catchy.")],
        },
        # as_agent() answers with the final agent's reply only: one message, nothing after it.
        expected=[re.compile(r"===== Conversation =====\n-{60}\n01 \[reviewer\]\nClear and catchy\.\n\Z")],
    ),
    "03-workflows/orchestrations/concurrent_agents.py": Case(
        script={
            "market and product researcher": ["Urban commuters want range."],
            "creative marketing strategist": ["Commute for less."],
            "legal/compliance reviewer": ["Check local e-bike rules."],
        },
        expected=[
            "===== Final Aggregated Conversation (messages) =====",
            "01 [researcher]:\nUrban commuters want range.",
            "02 [marketer]:\nCommute for less.",
            "03 [legal]:\nCheck local e-bike rules.",
        ],
    ),
    "03-workflows/tool-approval/sequential_builder_tool_approval.py": Case(
        script=[
            call("get_database_schema"),
            call("execute_database_query", query="UPDATE orders SET status = 'processing' WHERE status = 'pending'"),
            lambda m, o: "Done. " + last_tool_result(m),
        ],
        expected=[
            "Starting sequential workflow with tool approval...",
            "[APPROVAL REQUIRED]",
            "  Tool: execute_database_query",
            """  Arguments: {"query":"UPDATE orders SET status = 'processing' WHERE status = 'pending'"}""",
            "Simulating human approval for: execute_database_query",
            # Streamed, the output is the agent's reply update by update (the tool ran: its result is quoted).
            "Workflow summary:\n[DatabaseAgent]: Done. ",
            "Workflow summary:\n[DatabaseAgent]: executed ",
            "Workflow summary:\n[DatabaseAgent]: 3 ",
        ],
    ),
    "03-workflows/tool-approval/concurrent_builder_tool_approval.py": Case(
        script={
            "Microsoft (MSFT)": [
                call("execute_trade", symbol="MSFT", action="buy", quantity=10),
                lambda m, o: "MSFT: " + last_tool_result(m),
            ],
            "Google (GOOGL)": [
                call("set_stop_loss", symbol="GOOGL", stop_price=130.0),
                lambda m, o: "GOOGL: " + last_tool_result(m),
            ],
        },
        expected=[
            "Starting concurrent workflow with tool approval...",
            "Approval requested for tool: execute_trade",
            "Approval requested for tool: set_stop_loss",
            "Simulating human approval for: execute_trade",
            "Simulating human approval for: set_stop_loss",
            "Workflow completed. Aggregated results from both agents:",
            "- MicrosoftAgent: MSFT: Trade executed: BUY 10 shares of MSFT",
            "- GoogleAgent: GOOGL: Stop-loss set for GOOGL at $130.00",
        ],
    ),
    "03-workflows/control-flow/simple_loop.py": Case(
        # The judge answers from the target and guess in its prompt; a binary search of 1..100 for 30 takes 7.
        script=[_judge_guess] * 7,
        expected=["Workflow output: Guessed the number: 30", "Guessed 7 times."],
    ),
    "03-workflows/orchestrations/sequential_custom_executors.py": Case(
        script=["Budget eBikes cut commuting costs."],
        expected=["===== Final Summary =====\nSummary -> users:1 assistants:1"],
    ),
    "01-get-started/07_first_graph_workflow.py": Case(
        expected=["Output: ['DLROW OLLEH']", "Final state: WorkflowRunState.IDLE"],
    ),
    "03-workflows/_start-here/step1_executors_and_edges.py": Case(
        expected=[
            "Workflow 1 (introspection-based types):",
            "['DLROW OLLEH']",
            "Final state: WorkflowRunState.IDLE",
            "Workflow 2 (explicit @handler types):",
            "['!!!DLROW OLLEH']",
            "Final state: WorkflowRunState.IDLE",
        ],
    ),
    "03-workflows/control-flow/sequential_executors.py": Case(expected=["Workflow outputs: ['DLROW OLLEH']"]),
    "03-workflows/control-flow/sequential_streaming.py": Case(
        expected=["Workflow completed with result: DLROW OLLEH"],
    ),
    "03-workflows/control-flow/workflow_cancellation.py": Case(
        slow=True,
        expected=[
            "=== Run with cancellation ===",
            "[Step1] Done",
            "[Step2] Starting...",
            "--- Cancelling workflow ---",
            "Workflow was cancelled",
            "=== Run to completion ===",
            "[Step3] Done",
            "Workflow completed with output: ['Result: HELLO WORLD!']",
        ],
    ),
    "03-workflows/control-flow/intermediate_vs_terminal_outputs.py": Case(
        expected=[
            "  [intermediate] planner: plan: starting work on 'life, the universe, and everything'",
            "  [intermediate] researcher: research: gathering data for 'life, the universe, and everything'",
            "  [output]       answerer: final answer to 'life, the universe, and everything': 42",
            """  outputs: ["final answer to 'life, the universe, and everything': 42"]""",
            # The release forwards a workflow agent's intermediate events as they are (the sample's snapshot turned
            # them into reasoning), so the agent's text holds all three and there is no reasoning content.
            re.compile(
                r"  response\.text \(Workflow Output only\): "
                r"\"plan: starting work on .*research: gathering .*final answer .*: 42\""
            ),
            "  reasoning content (intermediates): ''",
            "  [intermediate] sub: plan: starting work on 'life, the universe, and everything'",
            "  [intermediate] sub: research: gathering data for 'life, the universe, and everything'",
            "  [output]       parent_sink: final answer to 'life, the universe, and everything': 42",
        ],
    ),
    "03-workflows/checkpoint/checkpoint_with_resume.py": Case(
        expected=[
            "StartExecutor: Starting factor pair computation up to 10",
            re.compile(r"Checkpoint \S+: \(iter=\d+, messages=\{"),
            "Workflow completed successfully with output: {1: [], 2: [(1, 2)], 3: [(1, 3)], 4: [(1, 4), (2, 2)]",
        ],
    ),
    "03-workflows/composition/sub_workflow_basics.py": Case(
        expected=[
            "Total texts processed: 6",
            "Total words: 45",
            "Total characters: 276",
            "Average words per text: 7.5",
            "Processing complete!",
        ],
    ),
    "03-workflows/parallelism/aggregate_results_of_different_types.py": Case(
        expected=[re.compile(r"^\[\d+(\.\d+)?, \d+\]$", re.M)],
    ),
    "03-workflows/observability/executor_io_observation.py": Case(
        expected=[
            "[INVOKED] upper_case",
            "    Input: str: 'hello world'",
            "[COMPLETED] upper_case",
            "[INVOKED] reverse_text",
            "    Input: str: 'HELLO WORLD'",
            "[WORKFLOW OUTPUT] str: 'DLROW OLLEH'",
            "[COMPLETED] reverse_text",
        ],
    ),
    "03-workflows/orchestrations/magentic_human_plan_review.py": Case(
        script={
            "You coordinate a team": [
                MagenticTaskLedger(facts="SAF cuts lifecycle CO2.", plan=["ResearcherAgent: gather facts"]),
                _saw(
                    "Add a cost comparison.",
                    MagenticTaskLedger(
                        facts="SAF cuts lifecycle CO2.",
                        plan=["ResearcherAgent: gather facts", "AnalystAgent: compare costs"],
                    ),
                ),
                MagenticProgressLedger(
                    is_request_satisfied=False, next_speaker="ResearcherAgent", instruction="Gather SAF facts."
                ),
                MagenticProgressLedger(
                    is_request_satisfied=False, next_speaker="AnalystAgent", instruction="Compare the costs."
                ),
                MagenticProgressLedger(is_request_satisfied=True),
                "SAF cuts emissions by up to 80% but costs two to three times jet fuel.",
            ],
            "You are a Researcher": ["SAF is made from waste oils and cuts CO2 by up to 80%."],
            "You are an Analyst": ["SAF costs two to three times as much as jet fuel."],
        },
        inputs=["Add a cost comparison.", ""],
        expected=[
            "Task: Research sustainable aviation fuel technology and summarize the findings.",
            "[Magentic Plan Review Request]",
            "Proposed Plan:",
            "1. ResearcherAgent: gather facts",
            "Please provide your feedback (press Enter to approve):",
            "Plan revised by human.",
            "[Magentic Plan Review Request]",
            "2. AnalystAgent: compare costs",
            "Plan approved.",
            "ResearcherAgent: SAF is made from waste oils and cuts CO2 by up to 80%.",
            "AnalystAgent: SAF costs two to three times as much as jet fuel.",
            "DISCUSSION COMPLETE",
            "[ResearcherAgent]: SAF is made from waste oils and cuts CO2 by up to 80%.",
            "[MagenticManager]: SAF cuts emissions by up to 80% but costs two to three times jet fuel.",
        ],
    ),
    "03-workflows/human-in-the-loop/group_chat_request_info.py": Case(
        script={
            "discussion manager": [
                GroupChatDecision(next_speaker="optimist"),
                GroupChatDecision(next_speaker="pragmatist"),
                GroupChatDecision(next_speaker="creative"),
                GroupChatDecision(terminate=True, final_message="We pilot AI tools with a review in one month."),
            ],
            "optimistic team member": ["AI tools can double our output."],
            "pragmatic team member": [
                "Start with one team for a month.",
                _saw("Mention the budget.", "Start with one team for a month, within a small budget."),
            ],
            "creative team member": [_saw("within a small budget", "Let people pitch their own AI experiments.")],
        },
        inputs=["Mention the budget.", "skip"],
        expected=[
            "INPUT REQUESTED",
            "Agent pragmatist just responded with: 'Start with one team for a month.'. Please provide your feedback.",
            "Conversation context:",
            "  [optimist]: AI tools can double our output....",
            "  [pragmatist]: Start with one team for a month....",
            "Feedback for pragmatist (or 'skip' to approve): ",
            "Agent pragmatist just responded with: 'Start with one team for a month, within a small budget.'.",
            "  [user]: Mention the budget....",
            "DISCUSSION COMPLETE",
            "[optimist]: AI tools can double our output.",
            "[pragmatist]: Start with one team for a month, within a small budget.",
            "[creative]: Let people pitch their own AI experiments.",
        ],
    ),
    "02-agents/tools/function_tool_from_dict_with_dependency_injection.py": Case(
        script=_tool_then_report("add_numbers", "5 + 3 = ", a=5, b=3),
        expected=["Response: 5 + 3 = 8"],
    ),
    # Draws the graph only (no agent runs): Mermaid, then DOT, then an SVG file (agentnb draws SVG itself, so
    # the reference's Graphviz prerequisite is not needed).
    "03-workflows/visualization/concurrent_with_visualization.py": Case(
        expected=[
            "Mermaid string: \n=======",
            "flowchart TD",
            '["dispatcher (Start)"]',
            "=======",
            "DiGraph string: \n=======",
            "digraph Workflow {",
            '"dispatcher" [fillcolor=lightgreen, label="dispatcher\\n(Start)"];',
            'label="fan-in"];',
            '"dispatcher" -> "researcher";',
            '"dispatcher" -> "legal";',
            re.compile(r'"legal" -> "fan_in::aggregator::[0-9a-f]{8}";'),
            re.compile(r'"fan_in::aggregator::[0-9a-f]{8}" -> "aggregator";'),
            "}",
            "=======",
            re.compile(r"SVG file saved to: \S+\.svg"),
        ],
    ),
    # The sample's documented output shows the configuration as JSON from an older release; the reference's
    # configuration is a plain dict (a TypedDict) and prints as one, as agentnb's does.
    "02-agents/tools/function_invocation_configuration.py": Case(
        script=[
            call("add", x=239847293, y=29834),
            _saw("239847293 + 29834 = 239877127", "239,877,127"),
        ],
        expected=[
            "Function invocation configured as: \n{'enabled': True, 'max_iterations': 40, 'max_function_calls': None, "
            "'max_consecutive_errors_per_request': 3, 'terminate_on_unknown_calls': False, 'additional_tools': [], "
            "'include_detailed_errors': True}",
            "=" * 60,
            "Call add(239847293, 29834)",
            "Response: 239,877,127",
        ],
    ),
    # No model: ResponseStream on its own (hooks, finalizer, map), with the sample's own generator.
    # The reference's single-method seam, composed with its layer mixins; needs no model.
    "02-agents/chat_client/custom_chat_client.py": Case(
        expected=[
            "Direct response: 🔊 ECHO: HELLO, CUSTOM CHAT CLIENT! (CUSTOM OPTIONS)",
            "Agent Name: EchoAgent",
            "Agent: 🔊 Echo: This is a test message",
            "Agent: 🔊 Echo: Stream this message back to me",
            "Agent: 🔊 Echo: Thanks for chatting!",
            "Session contains 6 messages",
        ],
    ),
    # Streaming first (two cities, parallel calls), then non-streaming; the tests in tests/anthropic also run the
    # original against a local Messages API server through AnthropicClient.
    "02-agents/providers/anthropic/anthropic_basic.py": Case(
        script=[
            [call("get_weather", location="Portland"), call("get_weather", location="Paris")],
            lambda m, o: "Both: " + all_tool_results(m),
            *_tool_then_report("get_weather", "Seattle: ", location="Seattle"),
        ],
        expected=[
            "=== Streaming Response Example ===",
            re.compile(r"Agent: Both: The weather in Portland is \w+ with a high of \d+°C\. \| The weather in Paris"),
            "=== Non-streaming Response Example ===",
            re.compile(r"Result: Seattle: The weather in Seattle is \w+ with a high of \d+°C\."),
        ],
    ),
    "02-agents/response_stream.py": Case(
        expected=[
            "Iterating through updates:",
            "  Update: 'Hello'",
            "  Update: '!'",
            "Final response: 'Hello from the streaming response!'",
            "Got final response directly: 'Hello from the streaming response!'",
            "Number of updates collected internally: 10",
            "  Received: 'HELLO'",
            "  Received: 'STREAMING'",
            "Total updates processed: 10",
            "Starting iteration (cleanup happens after):",
            "  [Cleanup] Cleaning up resources...",
            "Cleanup was performed: True",
            'Final text: "Hello from the streaming response!"',
            "Metadata: {'processed': True, 'word_count': 5}",
            "  [AGENT] Hello",
            "Mapped final: [AGENT FINAL] [AGENT] Hello[AGENT]  [AGENT] from",
            "Mapped metadata: {'layer': 'agent'}",
            "Inner stream consumed: True",
            "  -> 'Hello'",
            "  [Cleanup] Stream complete: 10 updates, 34 chars",
            "Final: 'Hello from the streaming response!'",
            "Stats: {'updates': 10, 'characters': 34}",
        ],
    ),
    # No model: the parent workflow intercepts the sub-workflow's domain checks (SubWorkflowRequestMessage) and
    # answers them itself (create_response), so no request reaches the caller.
    "03-workflows/composition/sub_workflow_request_interception.py": Case(
        expected=[
            "Processing email to 'user1@example.com'",
            "Validating domain: 'example.com'",
            "External domain validation for 'example.com': valid",
            "Domain 'example.com' is valid.",
            "Email sent to 'user1@example.com' successfully.",
            "Final result for 'user1@example.com': Delivered",
            "Processing email to ' user2@invalid'",
            "Invalid email format: 'user2@invalid'",
            "Final result for 'user2@invalid': Blocked",  # the sample replaced the recipient with its sanitized form
            "Processing email to '  user3@company.com  '",
            "External domain validation for 'company.com': valid",
            "Final result for 'user3@company.com': Delivered",
            "External domain validation for 'unknown.com': invalid",
            "Email address 'user4@unknown.com' is invalid. Blocking email.",
            "Final result for 'user4@unknown.com': Blocked",
            "Recipient 'user1@example.com' has been previously approved.",
            "Final result for 'user1@example.com': Delivered",
            "Blocking email to previously disapproved recipient: ' user2@invalid'",
            "Final result for ' user2@invalid': Blocked",
        ],
    ),
    # Without a session every call of a batch with an approval-required call asks for approval (the
    # reference's rule); the sample resends the query with each request and its answer, and the answers decide
    # which calls run: denied ones reach the model as denials.
    "02-agents/tools/function_tool_with_approval.py": Case(
        script=[
            [
                call("get_weather", location="Los Angeles, CA"),
                call("get_weather", location="Portland, OR"),
                call("get_weather_detail", location="Seattle, WA"),
            ],
            lambda m, o: "Summary: " + all_tool_results(m),
        ]
        * 2,
        inputs=["y", "y", "n", "y", "n", "y"],
        expected=[
            "=== Weather Agent with Approval Required (Non-Streaming) ===",
            "User: Can you give me an update of the weather in LA and Portland and detailed weather for Seattle?",
            "User Input Request for function from WeatherAgent:",
            '  Arguments: {"location":"Los Angeles, CA"}',
            "Approve function call? (y/n): ",
            "  Function: get_weather_detail",
            re.compile(
                r"WeatherAgent: Summary: The weather in Los Angeles, CA is \w+ and -?\d+°C\. \| "
                r"The weather in Portland, OR is \w+ and -?\d+°C\. \| "
                r"Error: Tool call invocation was rejected by user\."
            ),
            "=== Weather Agent with Approval Required (Streaming) ===",
            '  Arguments: {"location":"Portland, OR"}',
            re.compile(
                r"Summary: The weather in Los Angeles, CA is \w+ and -?\d+°C\. \| "
                r"Error: Tool call invocation was rejected by user\. \| "
                r"The weather in Seattle, WA is \w+ and -?\d+°C, with a humidity of 88%\."
            ),
        ],
    ),
    "03-workflows/declarative/simple_workflow/main.py": Case(
        expected=[
            "Loaded workflow: simple-greeting-workflow",
            "Running with default name:",
            "  Output: Hello, World!",
            "Running with custom name 'Alice':",
            "Workflow completed!",
        ],
    ),
    "03-workflows/declarative/conditional_workflow/main.py": Case(
        expected=[
            "Loaded workflow: conditional-workflow",
            "--- Testing with age: 8 ---",
            "  Output: Welcome, young one! Here are some fun activities for kids.",
            "  Output: You have been categorized as: child",
            "--- Testing with age: 15 ---",
            "  Output: Hey there! Check out these cool things for teens.",
            "  Output: You have been categorized as: teenager",
            "--- Testing with age: 35 ---",
            "  Output: Welcome! Here are our professional services.",
            "  Output: You have been categorized as: adult",
            "--- Testing with age: 70 ---",
            "  Output: Welcome! Enjoy our senior member benefits.",
            "  Output: You have been categorized as: senior",
            "Workflow completed for all test cases!",
        ],
    ),
    "03-workflows/declarative/human_in_loop/main.py": Case(
        expected=[
            "Loaded workflow: human-in-loop-workflow",
            "[Bot]: Welcome to the interactive survey!",
            "[System] Input requested for: Local.userName",
            "[System] Prompt: What is your name?",
            "=== Workflow Complete ===",
        ],
    ),
    "03-workflows/declarative/invoke_function_tool/main.py": Case(
        expected=[
            "Input: {'location': 'Seattle', 'unit': 'F'}",
            "Output: The weather in Seattle is 55°F",
            "Input: {'location': 'New York', 'unit': 'C'}",
            "Output: The weather in New York is 21°C",
            "Input: {'location': 'Los Angeles', 'unit': 'F'}",
            "Output: The weather in Los Angeles is 85°F",
            "Input: {'location': 'Chicago', 'unit': 'C'}",
            "Output: The weather in Chicago is 16°C",
        ],
    ),
    "03-workflows/declarative/function_tools/main.py": Case(
        # The agent's externalLoop: each answer asks for more input until the user types "exit".
        script=[
            *_tool_then_report("get_specials", "Specials: "),
            *_tool_then_report("get_item_price", "Price: ", name="Chai Tea"),
        ],
        inputs=["What is the soup of the day?", "How much is the Chai Tea?", "exit"],
        expected=[
            "Restaurant Menu Assistant (type 'exit' to quit)",
            re.compile(r"MenuAgent: Specials: .*Clam Chowder.*Chai Tea"),
            "MenuAgent: Price: $2.95",
        ],
    ),
    "02-agents/a2a/agent_with_a2a.py": Case(
        a2a_agent=True,
        script=[
            "I can help with code generation, analysis, and general Q&A.",
            "I am an AI assistant built to help with various tasks.",
        ],
        expected=[
            "Found agent: MyAgent - A helpful AI assistant",
            "--- Non-streaming response ---",
            "Agent Response:\n  I can help with code generation, analysis, and general Q&A.",
            "--- Streaming response ---",
            "I am an AI assistant built to help with various tasks.",
            "Final response:\n  I am an AI assistant built to help with various tasks.",
        ],
    ),
    "02-agents/a2a/a2a_protocol_selection.py": Case(
        a2a_agent=True,
        script=["Here's a short joke for you: why did the agent cross the protocol?"],
        expected=[
            "Agent: MyAgent",
            "Supported interfaces:",
            re.compile(r"  - JSONRPC @ http://127\.0\.0\.1:\d+/"),
            re.compile(r"  - HTTP\+JSON @ http://127\.0\.0\.1:\d+/rest"),
            "Configured bindings: ['HTTP+JSON', 'JSONRPC']",
            "Response: Here's a short joke for you: why did the agent cross the protocol?",
        ],
    ),
    "02-agents/a2a/a2a_stream_reconnection.py": Case(
        a2a_agent=True,
        script=["Artificial intelligence began as a summer project at Dartmouth in 1956 and grew from there."],
        expected=[
            "Starting streaming task...",
            "--- Connection interrupted! ---",
            "Reconnecting with continuation token...",
            "grew from there.",
            re.compile(r"Stream completed\. Total updates: \d+"),
            "Final response: 1 message(s)",
        ],
    ),
    # The offline model has no background mode: each run answers at once, so the sample polls nothing and has
    # no token to resume with. tests/openai/test_openai_background.py runs the original against the local
    # Responses API server, where it polls and resumes for real.
    "02-agents/background_responses.py": Case(
        script=[
            "Relativity: physics is the same for all inertial observers, and gravity curves spacetime.",
            "Exercise strengthens the heart, lifts the mood and builds bone.",
        ],
        expected=[
            "=== Non-Streaming Polling ===",
            "Initial status: continuation_token=None",
            "Result (0 poll(s)):",
            "Relativity: physics is the same for all inertial observers, and gravity curves spacetime.",
            "=== Streaming with Resumption ===",
            "First stream (before interruption):",
            "[simulated interruption]",
        ],
    ),
    "02-agents/evaluation/evaluate_agent.py": Case(
        # One reply per query, chosen by the query (cases run concurrently, so not by order).
        script=[_by_query(WEATHER_ANSWERS)] * 3,
        expected=[
            "Local: 3/3 passed",
            "  [pass] Q: What's the weather like in Seattle?  A: Seattle weather today: light rain, 14°C",
            "    PASS keyword_check",
            "    PASS is_helpful",
            "  [pass] Q: Will it rain in London tomorrow?  A: London weather tomorrow: showers likely, brin",
            "  [pass] Q: What should I wear for 30°C weather?  A: For 30°C weather wear light cotton clothes",
            "    PASS is_helpful",
        ],
    ),
    "02-agents/evaluation/evaluate_multimodal.py": Case(
        expected=[
            "Local: 2/3 passed",
            "  [pass] Q: What do you see in this image?...",
            "    PASS has_image_content: 1.0",
            "    PASS response_describes_image: 1.0",
            "    PASS image_count: 1.0",
            "  [pass] Q: Describe this picture...",
            "    PASS has_image_content: 1.0",
            "  [fail] Q: Tell me about cats...",
            "    FAIL has_image_content: 0.0",
            "    FAIL response_describes_image: 0.0",
            "    FAIL image_count: 0.0",
        ],
    ),
    "02-agents/evaluation/evaluate_with_expected.py": Case(
        script=[_by_query({"2 + 2": "4", "144": "The square root of 144 is 12"})] * 2,
        expected=[
            "Local: 2/2 passed",
            "  [pass] What is 2 + 2? -> 4",
            # The expected answer's only word ("12") is in the reply: overlap 1.0.
            "  [pass] What is the square root of 144? -> The square root of 144 is 12",
        ],
    ),
    "03-workflows/evaluation/evaluate_workflow.py": Case(
        script={
            "You plan trips": ["- Day 1: Louvre\n- Day 2: Seine cruise\nThat is the plan for your trip."],
            "You execute travel plans": [
                _saw("Seine cruise", "Booked every item of the trip plan: Louvre tickets and the cruise.")
            ],
        },
        expected=["Local: 1/1 passed (overall)", "  planner: 1/1", "  executor: 1/1"],
    ),
    # Functional workflows (ported from a later snapshot, with the build() lifecycle edit recorded in the manifest).
    "01-get-started/06_functional_workflow_basics.py": Case(
        expected=["Output: ['DLROW OLLEH']", "Final state: WorkflowRunState.IDLE"],
    ),
    "03-workflows/functional/basic_pipeline.py": Case(
        expected=["Output: [VALID] [200] Data from https://example.com/api/data", "State: WorkflowRunState.IDLE"],
    ),
    "03-workflows/functional/basic_streaming_pipeline.py": Case(
        expected=[
            "Output: [200] Data from https://example.com/api/data (valid=True)",
            "Final state: WorkflowRunState.IDLE",
        ],
    ),
    "03-workflows/functional/parallel_pipeline.py": Case(
        expected=[
            "Research Summary:",
            "  - Web results for 'AI agents': 10 articles found",
            "  - Papers on 'AI agents': 3 relevant papers",
            "  - News about 'AI agents': 5 recent articles",
        ],
    ),
    # The restored run returns the steps' saved results: the call counts stay at one.
    "03-workflows/functional/steps_and_checkpointing.py": Case(
        expected=[
            "=== Run 1: Fresh execution ===",
            "  fetch_data called (call #1)",
            "  transform_data called (call #1)",
            "Output: [200] Data from https://example.com/api/data (valid=True)",
            "fetch_calls=1, transform_calls=1",
            "  executor_invoked: fetch_data",
            "  executor_completed: fetch_data",
            "  executor_invoked: transform_data",
            "  executor_completed: transform_data",
            "=== Run 2: Restored from checkpoint ===",
            "Output: [200] Data from https://example.com/api/data (valid=True)",
            "fetch_calls=1, transform_calls=1",
        ],
    ),
    # write_draft runs once: the resumed run takes its saved result (the sample says so, the output shows it).
    "03-workflows/functional/hitl_review.py": Case(
        expected=[
            "=== Phase 1: Initial run ===",
            "  write_draft executing for 'AI Safety'",
            "State: WorkflowRunState.IDLE_WITH_PENDING_REQUESTS",
            "Pending request: review_request",
            "=== Phase 2: Resume with feedback ===",
            "(write_draft should NOT execute again — saved by @step)\nState: WorkflowRunState.IDLE",
            "Output: Revised: Draft document about 'AI Safety': Lorem ipsum dolo... "
            "[Applied feedback: Add more details about alignment research]",
        ],
    ),
    "01-get-started/05_functional_workflow_with_agents.py": Case(
        script={
            "Write a short poem": ["Whiskers on the keyboard,\nA cat learns to code."],
            "Review the given poem": [_saw("A cat learns to code.", "Charming and concise.")],
        },
        expected=["Poem:\nWhiskers on the keyboard,\nA cat learns to code.", "Review: Charming and concise."],
    ),
    "03-workflows/functional/agent_integration.py": Case(
        script={
            "Classify documents": ["Technical", "Technical"],
            "Summarize the given content": ["An ML primer.", "An ML primer."],
            "Review the given summary": [_saw("An ML primer.", "Accurate.")] * 2,
        },
        expected=[
            "Classification: Technical\nSummary: An ML primer.\nReview: Accurate.",
            "Cached: Classification: Technical\nSummary: An ML primer.\nReview: Accurate.",
        ],
    ),
    # Each agent sees the whole conversation so far (the critic is sent the expert's answer).
    "03-workflows/functional/naive_group_chat.py": Case(
        script={
            "Python expert": ["Lists are mutable; tuples are not."],
            "constructive critic": [_saw("tuples are not", "Mention hashability.")],
            "summarizer": [_saw("Mention hashability.", "Lists change, tuples don't and can be dict keys.")],
        },
        expected=[
            "user: What's the difference between a list and a tuple in Python?",
            "PythonExpert: Lists are mutable; tuples are not.",
            "Critic: Mention hashability.",
            "Summarizer: Lists change, tuples don't and can be dict keys.",
        ],
    ),
    "02-agents/context_providers/todo_provider.py": Case(
        script=[
            call(
                "todos_add",
                todos=[
                    {"title": "Pick a date and confirm attendees"},
                    {"title": "Book a venue"},
                    {"title": "Arrange catering"},
                    {"title": "Send out invites"},
                ],
            ),
            "Great — I've broken this into a starter plan. Let me know if you'd like to adjust anything.",
            call("todos_complete", items=[{"id": 2, "reason": "venue booked"}, {"id": 4, "reason": "invites sent"}]),
            "Nice work! I've marked the venue and invites as done.",
            [call("todos_remove", ids=[3]), call("todos_add", todos=[{"title": "Plan a group hike"}])],
            _saw('{"removed": 1}', "Done — I removed catering and added a group hike to the plan."),
        ],
        expected=[
            "Agent: Great — I've broken this into a starter plan.",
            "--- Current todo list ---",
            "  [ ] 1. Pick a date and confirm attendees\n  [ ] 2. Book a venue\n  [ ] 3. Arrange catering\n"
            "  [ ] 4. Send out invites",
            "Agent: Nice work! I've marked the venue and invites as done.",
            "  [ ] 1. Pick a date and confirm attendees\n  [x] 2. Book a venue\n  [ ] 3. Arrange catering\n"
            "  [x] 4. Send out invites",
            "Agent: Done — I removed catering and added a group hike to the plan.",
            "  [ ] 1. Pick a date and confirm attendees\n  [x] 2. Book a venue\n  [x] 4. Send out invites\n"
            "  [ ] 5. Plan a group hike",
        ],
    ),
    "02-agents/context_providers/file_memory_provider.py": Case(
        script=[
            call(
                "file_memory_write",
                file_name="userpreferences.md",
                content="- Vegetarian\n- Always travels with their dog",
                description="The user's travel preferences",
            ),
            "Got it — I'll remember that you're vegetarian and always travel with your dog.",
            _saw("userpreferences.md", call("file_memory_read", file_name="userpreferences.md")),
            lambda m, o: "Since you told me: " + last_tool_result(m).replace("\n", " "),
        ],
        expected=[
            re.compile(r"Memory files will be written to: .*agent-file-memory/users/UID1"),
            "=== First conversation ===",
            "Got it — I'll remember that you're vegetarian and always travel with your dog.",
            "=== Memory files on disk ===",
            "memories.md\nuserpreferences.md\nuserpreferences_description.md",
            "=== Second conversation (new session) ===",
            "Since you told me: - Vegetarian - Always travels with their dog",
        ],
    ),
    "02-agents/context_providers/agent_mode_provider.py": Case(
        inputs=[
            "Help me plan a blog post about the ocean.",
            "/mode",
            "/mode execute",
            "Go ahead and write it.",
            "/mode sleep",
            "/exit",
        ],
        script=[
            _saw("You are currently in the plan mode", "Sure — before we start writing, let's outline the sections."),
            _saw('switched from "plan" to "execute"', "Working through the plan autonomously now."),
        ],
        expected=[
            "Available modes: plan, execute",
            "Current mode: plan",
            "  /mode <name>     Switch mode (plan | execute)",
            "Sure — before we start writing, let's outline the sections.",
            "Current mode: plan",
            'Switched to "execute" mode.',
            "Working through the plan autonomously now.",
            "Invalid mode: 'sleep'. Supported modes are 'plan', 'execute'.",
        ],
    ),
    "02-agents/middleware/agent_loop_middleware_todos.py": Case(
        script=[
            call(
                "todos_add",
                todos=[
                    {"title": 'Draft "What light is" section'},
                    {"title": 'Draft "How Rayleigh scattering works" section'},
                    {"title": 'Draft "Why the sky is blue" section'},
                ],
            ),
            "Here is my plan. I'll create todos for each section.",
            call("todos_complete", items=[{"id": 1, "reason": "drafted"}]),
            "Section 1 drafted. Marking it done.",
            call("todos_complete", items=[{"id": 2, "reason": "drafted"}]),
            "Section 2 drafted. Marking it done.",
            call("todos_complete", items=[{"id": 3, "reason": "drafted"}]),
            "Section 3 drafted. Marking it done.",
        ],
        expected=[
            "=== Callable criterion (loop while todos remain) ===",
            "assistant: Here is my plan. I'll create todos for each section.",
            "user: Progress so far:\n- Here is my plan. I'll create todos for each section.",
            "user: Continue working on the task. If it is complete, say so.",
            "assistant: Section 1 drafted. Marking it done.",
            "user: Progress so far:\n- Section 1 drafted. Marking it done.",
            "assistant: Section 2 drafted. Marking it done.",
            "assistant: Section 3 drafted. Marking it done.",
            "Completed in 4 iteration(s).",
            "Todos after the run:",
            '  [x] 1. Draft "What light is" section',
            '  [x] 2. Draft "How Rayleigh scattering works" section',
            '  [x] 3. Draft "Why the sky is blue" section',
        ],
    ),
    "02-agents/middleware/agent_loop_middleware_refinement.py": Case(
        script=[
            '"QuickJot" — short and evokes fast capture.',
            _saw('iteration 1: "QuickJot"', 'How about "MarginNote"? <promise>COMPLETE</promise>'),
        ],
        expected=[
            "=== Refinement loop (should_continue marker + feedback tracking, capped at 5) ===",
            'assistant: "QuickJot" — short and evokes fast capture.',
            "user: Suggest a name for a note-taking app.",
            'user: Progress so far:\n- iteration 1: "QuickJot" — short and evokes fast capture.',
            "user: Continue working on the task. If it is complete, say so.",
            'assistant: How about "MarginNote"? <promise>COMPLETE</promise>',
            "Completed in 2 iteration(s).",
        ],
    ),
    "02-agents/middleware/agent_loop_middleware_judge.py": Case(
        script={
            "You are an evaluator": [
                JudgeVerdict(answered=False, reasoning="The response does not mention the moon."),
                _saw("moon", JudgeVerdict(answered=True, reasoning="All criteria are met.")),
            ],
            "Answer the user's question thoroughly": [
                _saw("Mentions the moon", "The sky is blue because blue light scatters more (Rayleigh scattering)."),
                _saw(
                    "does not mention the moon",
                    "Blue light scatters most, so the sky is blue; at sunset the long path leaves red. "
                    "Even the moon looks red then, which is a moonlight joke worth waiting for.",
                ),
            ],
        },
        expected=[
            "=== ChatClient judge (loop until the request is answered) ===",
            "assistant: The sky is blue because blue light scatters more (Rayleigh scattering).",
            "user: An evaluator reviewed your previous response and judged that it does not yet fully address",
            "Evaluator feedback: The response does not mention the moon.",
            "Revise and continue so the original request is fully addressed.",
            "assistant: Blue light scatters most, so the sky is blue",
            "Completed in 2 iteration(s).",
        ],
    ),
    "02-agents/middleware/agent_loop_middleware_report.py": Case(
        script={
            "senior editor": [
                _saw(
                    "Opens with a one-paragraph executive summary",
                    JudgeVerdict(answered=False, reasoning="Add a one-paragraph executive summary first."),
                ),
                _saw("Executive summary", JudgeVerdict(answered=True, reasoning="Publication-ready.")),
            ],
            "research writer": [
                call(
                    "todos_add",
                    todos=[
                        {"title": "Benefits section"},
                        {"title": "Risks section"},
                        {"title": "Key takeaways"},
                        {"title": "Assemble and output the complete report"},
                    ],
                ),
                "Here is my plan. I'll create todos for each section and a final assembly item.",
                call("todos_complete", items=[{"id": 1, "reason": "drafted"}]),
                "Benefits drafted.",
                call("todos_complete", items=[{"id": 2, "reason": "drafted"}]),
                "Risks drafted.",
                call("todos_complete", items=[{"id": 3, "reason": "drafted"}]),
                "Takeaways drafted.",
                call("todos_complete", items=[{"id": 4, "reason": "assembled"}]),
                "# Remote Work for Software Teams\n\n## Benefits\nFlexibility.\n\n## Key takeaways\n- Focus.",
                _saw(
                    "executive summary",
                    "# Remote Work for Software Teams\n\n**Executive summary:** Remote work trades commute for focus.",
                ),
            ],
        },
        expected=[
            "=== Todo list + report-style judge (two composed middleware) ===",
            "assistant: Here is my plan. I'll create todos for each section and a final assembly item.",
            "user: Continue working on the task. If it is complete, say so.",
            "assistant: Benefits drafted.",
            "assistant: # Remote Work for Software Teams",
            "Evaluator feedback: Add a one-paragraph executive summary first.",
            "**Executive summary:** Remote work trades commute for focus.",
            "Completed in 6 agent run(s).",
            "Todos after the run:",
            "  [x] 1. Benefits section",
            "  [x] 4. Assemble and output the complete report",
        ],
    ),
    "02-agents/middleware/message_injection_middleware.py": Case(
        script=[
            call("slow_inventory_lookup", item="red travel mug"),
            _saw(
                "only pick it up after 5 PM",
                "The red travel mug is in stock with curbside pickup today; choose a pickup window after 5 PM.",
            ),
        ],
        expected=[
            "=== Message Injection Middleware Example ===",
            "User:> Can I pick up a red travel mug today? Check inventory before answering.",
            "Tool: checking inventory for 'red travel mug'...",
            "User (injected while tool is running):> Please also mention that I can only pick it up after 5 PM.",
            "Tool: inventory lookup finished.",
            "Assistant:> The red travel mug is in stock with curbside pickup today; choose a pickup window after 5 PM.",
        ],
        slow=True,  # the sample's tool sleeps 8 s so that a message can be injected meanwhile
    ),
    # Compaction. The samples' documented outputs are the reference's; where agentnb differs it is said here.
    "02-agents/compaction/basics.py": Case(
        expected=[
            "Message count: 8",
            "--- After compaction (SelectiveToolCallCompactionStrategy) ---",
            "Message count: 6",
            "01. [system] You are a helpful assistant.",
            "02. [user] Plan a data migration.",
            "03. [assistant] I will gather requirements.",
            "04. [assistant] I found three core tables.",
            "05. [user] Estimate effort and risks.",
            "06. [assistant] Primary risk is schema drift.",
        ]
    ),
    "02-agents/compaction/custom.py": Case(
        expected=[
            "Number of messages before compaction: 5",
            "Number of messages after compaction: 2",
            "[system] You are concise.",
            "[user] second request",
        ]
    ),
    # Run 3's per-run truncation would leave only the last assistant message; agentnb always sends the newest
    # user turn with it, so the model receives two messages there (tokens still counted by the run's tokenizer).
    "02-agents/compaction/agent_client_overrides.py": Case(
        expected=[
            "1. Client default compaction",
            "Model receives 2 message(s):",
            "- [user] Summarize the rollout risks. (7 tokens)",
            "- [assistant] The main risks are drift, downtime, and rollback gaps. (7 tokens)",
            "2. Agent-level override",
            "Model receives 3 message(s):",
            "- [assistant] I will gather the constraints first. (11 tokens)",
            "- [user] Summarize the rollout risks. (11 tokens)",
            "3. Per-run override",
            "Model receives 2 message(s):",
            "- [user] Summarize the rollout risks. (23 tokens)",
            "- [assistant] The main risks are drift, downtime, and rollback gaps. (23 tokens)",
        ]
    ),
    # agentnb's chat middleware sees the agent's instructions as the first (system) message, so each count is
    # one more than the reference's, which passes instructions beside the messages. The reference's documented
    # turns 3 and 4 show "How about Paris?" dropped together with the London tool group (its auto-assigned
    # message ids repeat across turns, so unrelated messages share a group); agentnb's ids stay unique, so the
    # window keeps the last three whole groups: the Paris question, its tool call and its answer.
    "02-agents/compaction/compaction_provider.py": Case(
        script=[
            *_tool_then_report("get_weather", "The weather in London is ", city="London"),
            *_tool_then_report("get_weather", "The weather in Paris is ", city="Paris"),
            *_tool_then_report("get_weather", "The weather in Tokyo is ", city="Tokyo"),
            _saw("rainy, 22°C", "Tokyo is the warmest at 22°C.", "I only know about some of the cities."),
        ],
        expected=[
            "Turn 1 — User: What is the weather in London?",
            "Model receives 2 messages:",
            "02. [user] What is the weather in London?",
            "Agent: The weather in London is cloudy, 12°C",
            "Turn 2 — User: How about Paris?",
            "Stored history: 4 messages (0 excluded)",
            "Model receives 6 messages:",
            "06. [user] How about Paris?",
            "Turn 3 — User: And Tokyo?",
            "Stored history: 8 messages (0 excluded)",
            "Model receives 6 messages:",
            "02. [user] How about Paris?",
            "03. [assistant] function_call",
            "05. [assistant] The weather in Paris is sunny, 18°C",
            "06. [user] And Tokyo?",
            "Turn 4 — User: Which city is the warmest?",
            "Stored history: 13 messages (2 excluded)",
            "02. [assistant] ← summary [Tool results: get_weather: cloudy, 12°C]",
            "03. [assistant] ✗ (tool_result_compaction) function_call",
            "04. [tool] ✗ (tool_result_compaction) function_result",
            "Model receives 6 messages:",
            "02. [user] And Tokyo?",
            "06. [user] Which city is the warmest?",
            "Agent: Tokyo is the warmest at 22°C.",
            "Done.",
        ],
    ),
    "02-agents/compaction/summarization.py": Case(
        script=[
            _saw(
                "1. [user] We are migrating a monolith to microservices. Where do we start?",
                "The team is extracting billing first with the strangler-fig pattern.",
            )
        ],
        expected=[
            "--- Before compaction ---",
            "Message count: 9",
            "--- After compaction (SummarizationStrategy) ---",
            "Message count: 6",
            "01. [system] You are a project planning assistant.",
            "02. [assistant] The team is extracting billing first with the strangler-fig pattern.",
            "03. [user] How should we handle the shared invoices table?",
            "06. [assistant] We decided to extract billing first using the strangler-fig pattern.",
            "Generated summary (summary_9):",
            "  summarizes original ids: ['msg_1', 'msg_2', 'msg_3', 'msg_4']",
            "Originals replaced by the summary:",
            "  msg_1 -> summary_9",
            "  msg_4 -> summary_9",
        ],
    ),
    "02-agents/compaction/advanced.py": Case(
        script=[_saw("Iteration 1:", "Four planning turns set the migration requirements and a testing matrix.")],
        expected=[
            "Before compaction message set:",
            "- [system] You are a migration copilot that plans and executes database migrations. (msg_0, 46 tokens)",
            "Projected messages after compaction: 5",
            "Included token count before compaction: 757",
            "Projected roles: ['system', 'assistant', 'assistant', 'user', 'assistant']",
            re.compile(
                r"- \[assistant\] Four planning turns set the migration requirements and a testing matrix\. "
                r"\(summary_14, \d+ tokens\) <- summary of \['msg_1', "
            ),
            "- [assistant] Schema inspection found four core tables to migrate. (msg_11, 42 tokens)",
            "Generated summary:",
        ],
    ),
    # tiktoken reads o200k_base from a local copy (tiktoken's cache pointed at one an installed package ships).
    "02-agents/compaction/tiktoken_tokenizer.py": Case(
        env={"TIKTOKEN_CACHE_DIR": str(ENCODINGS) if ENCODINGS else ""},
        expected=[
            "Projected messages: 3",
            "Included token count before compaction: 263",
            "Included token count after compaction: 149",
            "Projected roles: ['system', 'user', 'assistant']",
            "- [system] You are a migration assistant. (40 tokens)",
            "- [user] Now provide a detailed checklist with owners, rollback gates, and validation criteria."
            " (49 tokens)",
        ],
    ),
}

# -- agent skills -------------------------------------------------------------------------------------------------

_CONVERSIONS = [
    call("read_skill_resource", skill_name="unit-converter", resource_name="references/CONVERSION_TABLES.md"),
    [
        call(
            "run_skill_script",
            skill_name="unit-converter",
            script_name="scripts/convert.py",
            args=["--value", "26.2", "--factor", "1.60934"],
        ),
        call(
            "run_skill_script",
            skill_name="unit-converter",
            script_name="scripts/convert.py",
            args=["--value", "75", "--factor", "2.20462"],
        ),
    ],
    lambda m, o: "Converted: " + all_tool_results(m),
]
_SKILLS = "02-agents/skills"
CASES.update(
    {
        f"{_SKILLS}/file_based_skill/file_based_skill.py": Case(
            tree=_SKILLS,
            script=[call("load_skill", skill_name="unit-converter"), *_CONVERSIONS],
            expected=[
                "Converting units",
                re.compile(
                    r'Agent: Converted: \{"value": 26\.2, "factor": 1\.60934, "result": 42\.1647\} \| '
                    r'\{"value": 75\.0, "factor": 2\.20462, "result": 165\.3465\}'
                ),
            ],
        ),
        f"{_SKILLS}/code_defined_skill/code_defined_skill.py": Case(
            script=[
                call("load_skill", skill_name="unit-converter"),
                call("read_skill_resource", skill_name="unit-converter", resource_name="conversion-policy"),
                lambda m, o: "Policy: " + last_tool_result(m).split("Decimal places:** ")[1].split("\n")[0],
            ],
            expected=["Converting units", "Agent: Policy: 2"],  # the run's precision=2 reached the resource
        ),
        f"{_SKILLS}/class_based_skill/class_based_skill.py": Case(
            script=[
                call("load_skill", skill_name="unit-converter"),
                [
                    call(
                        "run_skill_script",
                        skill_name="unit-converter",
                        script_name="convert",
                        args={"value": 26.2, "factor": 1.60934},
                    ),
                    call(
                        "run_skill_script",
                        skill_name="unit-converter",
                        script_name="convert",
                        args={"value": 75, "factor": 2.20462},
                    ),
                ],
                lambda m, o: "Converted: " + all_tool_results(m),
            ],
            expected=[
                "Converting units with class-based skills",
                re.compile(r"Agent: Converted: .*42\.1647.*165\.3465"),
            ],
        ),
        f"{_SKILLS}/script_approval/script_approval.py": Case(
            script=[
                call("load_skill", skill_name="deployment"),
                call(
                    "run_skill_script",
                    skill_name="deployment",
                    script_name="deploy",
                    args={"version": "2.5.0", "environment": "production"},
                ),
                lambda m, o: "Done: " + last_tool_result(m),
            ],
            expected=[
                "User: Deploy the latest application version 2.5.0 to the production environment",
                "  Function: load_skill",
                "  Decision: Approved",
                "  Function: run_skill_script",
                "Agent: Done: Deployed version 2.5.0 to production",
            ],
        ),
        f"{_SKILLS}/skills_auto_approval/skills_auto_approval.py": Case(
            script=[
                call("load_skill", skill_name="unit-converter"),
                call(
                    "run_skill_script",
                    skill_name="unit-converter",
                    script_name="convert",
                    args={"value": 26.2, "factor": 1.60934},
                ),
                lambda m, o: "Result: " + last_tool_result(m),
            ],
            # The read-only rule answered load_skill; only the script asked a person.
            expected=[
                "Approval needed:\n  Function: run_skill_script",
                re.compile(r"Agent: Result: .*42\.16"),
            ],
        ),
        f"{_SKILLS}/mixed_skills/mixed_skills.py": Case(
            tree=_SKILLS,
            script=[
                lambda m, o: (
                    call("load_skill", skill_name="volume-converter")
                    if all(
                        f"<name>{n}</name>" in sent_text(m, o)
                        for n in ("unit-converter", "volume-converter", "temperature-converter")
                    )
                    else "not every kind of skill was advertised"
                ),
                [
                    call(
                        "run_skill_script",
                        skill_name="unit-converter",
                        script_name="scripts/convert.py",
                        args=["--value", "26.2", "--factor", "1.60934"],
                    ),
                    call(
                        "run_skill_script",
                        skill_name="volume-converter",
                        script_name="convert",
                        args={"value": 5, "factor": 3.78541},
                    ),
                    call(
                        "run_skill_script",
                        skill_name="temperature-converter",
                        script_name="convert-temperature",
                        args={"value": 98.6, "factor": 0.5556, "offset": -17.7778},
                    ),
                ],
                lambda m, o: "Results: " + all_tool_results(m),
            ],
            expected=[
                "Converting with mixed skills (file + code + class)",
                re.compile(r"Agent: Results: .*42\.1647.*\| .*18\.92.*\| .*37\.0"),
            ],
        ),
        f"{_SKILLS}/skill_filtering/skill_filtering.py": Case(
            tree=_SKILLS,
            script=[
                lambda m, o: (
                    "length-converter was advertised"
                    if "<name>length-converter</name>" in sent_text(m, o)
                    else call("load_skill", skill_name="volume-converter")
                ),
                call(
                    "run_skill_script",
                    skill_name="volume-converter",
                    script_name="scripts/convert.py",
                    args=["--value", "5", "--factor", "3.78541"],
                ),
                lambda m, o: "Liters: " + last_tool_result(m),
            ],
            expected=[
                "Skill filtering demo",
                re.compile(r'Agent: Liters: \{"value": 5\.0, "factor": 3\.78541, "result": 18\.927'),
            ],
        ),
    }
)


_HARNESS = "02-agents/harness"
_PLAN = (
    '{"type": "approval", "questions": [{"message": "Plan: 1) find when the Seattle monorail opened, '
    '2) find its yearly ridership, then save a report. Start?", "choices": null}]}'
)


def _north_totals() -> dict[str, float]:
    """Sales by person in the North region, computed here from the sample's own data file."""
    import csv

    totals: dict[str, float] = {}
    with (PORTS / _HARNESS / "working" / "sales.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["region"] == "North":
                amount = int(row["quantity"]) * float(row["unit_price"])
                totals[row["salesperson"]] = totals.get(row["salesperson"], 0.0) + amount
    return totals


def _totals_csv(messages: list[Any], options: dict[str, Any]) -> Any:
    """The model's write: the North totals computed from the file the agent read (so a wrong read shows)."""
    import csv
    import io as text_io

    totals: dict[str, float] = {}
    for row in csv.DictReader(text_io.StringIO(last_tool_result(messages))):
        if row["region"] == "North":
            totals[row["salesperson"]] = totals.get(row["salesperson"], 0.0) + int(row["quantity"]) * float(
                row["unit_price"]
            )
    content = "salesperson,total\n" + "".join(f"{name},{total:.2f}\n" for name, total in sorted(totals.items()))
    return call("file_access_write", file_name="north_region_totals.csv", content=content)


_NORTH = _north_totals()
CASES.update(
    {
        f"{_HARNESS}/harness_research.py": Case(
            tree=_HARNESS,
            expected_warnings=("agentnb.harness.ExperimentalWarning",),  # the loop, as in the reference
            inputs=[
                "Research the Seattle monorail.",
                "1",  # approve the plan: execute mode
                "/todos",
                "/mode",
                "/exit",
            ],
            script=[
                # Plan mode: the console asks for a PlanningResponse; the agent plans with todos first.
                _saw(
                    "You are currently in the plan mode",
                    call(
                        "todos_add",
                        todos=[{"title": "Find when the monorail opened"}, {"title": "Find its yearly ridership"}],
                    ),
                ),
                lambda m, o: _PLAN if o.get("response_format").__name__ == "PlanningResponse" else "no schema",
                # Approved: the switch to execute mode is announced, and the loop works through the todos.
                _saw('switched from "plan" to "execute"', call("todos_complete", items=[{"id": 1, "reason": "1962"}])),
                "The monorail opened in 1962 for the World's Fair.",
                _saw("Find its yearly ridership", call("todos_complete", items=[{"id": 2, "reason": "2 million"}])),
                call(
                    "file_memory_write",
                    file_name="monorail_report.md",
                    content="# Seattle monorail\n- Opened 1962\n- About 2 million riders a year",
                    description="Final research report",
                ),
                lambda m, o: "Report saved (" + last_tool_result(m) + ") It carries about 2 million riders a year.",
            ],
            expected=[
                "🔬 Research Assistant",
                "Mode: plan",
                "You: Research the Seattle monorail.",
                '🔧 todos_add({"todos":[{"title":"Find when the monorail opened"}',
                # The usage against the budgets the sample gives both the console and the agent's compaction.
                re.compile(r"📊 Tokens — input: [\d,]+/111,616 \(\d+\.\d%\) \| output: [\d,]+/16,384"),
                "🔹 Plan: 1) find when the Seattle monorail opened, 2) find its yearly ridership, then save a report.",
                "   1. Approve and switch to execute mode",
                "✅ Switched to execute mode.",
                '🔧 todos_complete({"items":[{"id":1,"reason":"1962"}]})',
                "Agent: The monorail opened in 1962 for the World's Fair.",
                "[user] You still have 1 open todo item(s) to address before you can finish:\n"
                "- Find its yearly ridership",
                '🔧 todos_complete({"items":[{"id":2,"reason":"2 million"}]})',
                "🔧 file_memory_write(",
                "Agent: Report saved (File 'monorail_report.md' written",
                "── Todo List ──",
                "[✓] #1 Find when the monorail opened",
                "[✓] #2 Find its yearly ridership",
                "Current mode: execute",
                "Goodbye!",
            ],
        ),
        f"{_HARNESS}/harness_data_processing.py": Case(
            tree=_HARNESS,
            expected_warnings=("agentnb.harness.ExperimentalWarning",),  # file access, as in the reference
            inputs=[
                "Please process the sales.csv file by first filtering it to only North region sales, and then "
                "calculating the sum of sales by person. I'd like to write the results of the processing to "
                "north_region_totals.csv",
                "1",  # approve the write
                "Show me north_region_totals.csv.",
                "Now delete sales.csv.",
                "4",  # deny the delete
                "/exit",
            ],
            script=[
                call("file_access_ls"),  # read-only: auto-approved by the rule, no question
                _saw("sales.csv", call("file_access_read", file_name="sales.csv")),
                _totals_csv,
                lambda m, o: "Done: " + last_tool_result(m),
                call("file_access_read", file_name="north_region_totals.csv"),
                lambda m, o: "Totals:\n" + last_tool_result(m),
                call("file_access_delete", file_name="sales.csv"),
                _saw("Error: Tool call invocation was rejected by user.", "Understood, sales.csv stays."),
            ],
            expected=[
                "📊 Data Analyst",
                "🔧 file_access_ls(",
                "🔧 file_access_read(",
                "⚠️ Approval needed: file_access_write",
                "🔐 Tool approval: file_access_write",
                "   └─ ✅ Approved",
                "Done: File 'north_region_totals.csv' written.",
                "Agent: Totals:\nsalesperson,total\n"
                + "".join(f"{name},{total:.2f}\n" for name, total in sorted(_NORTH.items())).rstrip("\n"),
                "⚠️ Approval needed: file_access_delete",
                "   └─ ❌ Denied",
                "Agent: Understood, sales.csv stays.",
                "Goodbye!",
            ],
        ),
    }
)


def _with_handoff(text: str, target: str, *, after: str = "") -> Any:
    """A reply that says ``text`` and hands the conversation to ``target`` in the same message (only once the
    model was sent ``after``; otherwise it says it does not know)."""

    def answer(messages: list[Any], options: dict[str, Any]) -> Any:
        if after not in sent_text(messages, options):
            return "I don't know that."
        return [Content.from_text(text), call(f"handoff_to_{target}")]

    return answer


_AUTONOMOUS_CONTINUE = "The user did not respond. Continue on your own, or hand off if another agent should take over."
CASES["03-workflows/orchestrations/handoff_autonomous.py"] = Case(
    script={
        # The coordinator assigns research, then the summary, then (autonomously, as no one answers) wraps up
        # until its fifth message ends the run.
        "You are a coordinator": [
            _with_handoff("Research first, then a summary.", "research_agent"),
            _with_handoff("Now the summary.", "summary_agent", after="Research is complete."),
            "The research and its summary are done.",
            _saw(_AUTONOMOUS_CONTINUE, "Nothing is left to do."),
            _saw(_AUTONOMOUS_CONTINUE, "Closing the task."),
        ],
        # The researcher keeps going on its own (autonomous mode) for three aspects, then hands back.
        "research specialist": [
            _saw("comprehensive research on Microsoft Agent Framework", "Aspect 1: agents and tools."),
            _saw(_AUTONOMOUS_CONTINUE, "Aspect 2: workflows and checkpoints."),
            _saw(_AUTONOMOUS_CONTINUE, "Aspect 3: orchestrations."),
            _with_handoff("Research is complete.", "coordinator"),
        ],
        "You summarize research findings": [
            _with_handoff("Summary: agents, workflows and orchestrations.", "coordinator", after="Aspect 3"),
        ],
    },
    expected=[
        "Request: Perform a comprehensive research on Microsoft Agent Framework.",
        "Handoff Event: from coordinator to research_agent",
        "Handoff Event: from research_agent to coordinator",
        "Handoff Event: from coordinator to summary_agent",
        "Handoff Event: from summary_agent to coordinator",
        # agentnb's handoff output is the final conversation (each reply is an intermediate event), which the
        # sample prints as its transcript.
        "Final Conversation Transcript:",
        "coordinator: Research first, then a summary.",
        "research_agent: Aspect 1: agents and tools.",
        f"user: {_AUTONOMOUS_CONTINUE}",
        "research_agent: Aspect 2: workflows and checkpoints.",
        "research_agent: Aspect 3: orchestrations.",
        "research_agent: Research is complete.",
        "coordinator: Now the summary.",
        "summary_agent: Summary: agents, workflows and orchestrations.",
        "coordinator: The research and its summary are done.",
        "coordinator: Closing the task.",
    ],
)


@contextlib.contextmanager
def _answers(inputs: list[str]) -> Iterator[None]:
    pending = list(inputs)

    def fake_input(prompt: str = "") -> str:
        print(prompt, end="")
        if not pending:
            raise AssertionError("the sample asked for more input than the test scripted")
        return pending.pop(0)

    original = builtins.input
    builtins.input = fake_input
    try:
        yield
    finally:
        builtins.input = original


def run_sample(rel: str, case: Case, workdir: Path) -> str:
    """Run one port as ``python sample.py`` would (from a copy in ``workdir``), returning what it printed."""
    parity_model.use(case.script)
    if case.tree is not None:
        # The sample reads files beside it (skill folders, a shared module): run it from a copy of the tree.
        shutil.copytree(PORTS / case.tree, workdir / "tree")
        script = workdir / "tree" / Path(rel).relative_to(case.tree)
    else:
        script = workdir / Path(rel).name
        shutil.copyfile(PORTS / rel, script)  # samples may write next to themselves
    for data in DATA:  # the files a sample reads next to itself (workflow.yaml)
        if Path(data).parent == Path(rel).parent:
            shutil.copyfile(PORTS / data, script.parent / Path(data).name)
    out = io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        _answers(case.inputs),
        _a2a_agent_host(case.a2a_agent),
        _beside(script.parent),
    ):
        runpy.run_path(str(script), run_name="__main__")
    return out.getvalue()


@contextlib.contextmanager
def _beside(folder: Path) -> Iterator[None]:
    """Modules next to the sample import as ``python sample.py`` finds them, and are forgotten afterwards."""
    sys.path.insert(0, str(folder))
    before = set(sys.modules)
    try:
        yield
    finally:
        sys.path.remove(str(folder))
        for name in set(sys.modules) - before:
            module_file = getattr(sys.modules[name], "__file__", None) or ""
            if module_file.startswith(str(folder)):
                del sys.modules[name]


@contextlib.contextmanager
def _a2a_agent_host(enabled: bool) -> Iterator[None]:
    """An agent on the parity model served over A2A from its own thread, as the A2A samples expect one."""
    if not enabled:
        yield
        return
    import asyncio
    import os
    import threading

    from agentnb import Agent
    from agentnb.a2a import A2AServer

    loop = asyncio.new_event_loop()
    server = A2AServer(Agent(parity_model.model(), name="MyAgent", description="A helpful AI assistant"))
    started = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, name="a2a-sample-server", daemon=True)
    thread.start()
    assert started.wait(30), "the A2A server did not start"
    os.environ["A2A_AGENT_HOST"] = server.url
    try:
        yield
    finally:
        os.environ.pop("A2A_AGENT_HOST", None)

        async def shutdown() -> None:
            await server.stop()
            # sse-starlette leaves a watcher task per process; end it before the loop closes.
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


def assert_in_order(output: str, expected: list[str | re.Pattern[str]]) -> None:
    position = 0
    for item in expected:
        if isinstance(item, re.Pattern):
            match = item.search(output, position)
            found, end = (match.start(), match.end()) if match else (-1, -1)
        else:
            found = output.find(item, position)
            end = found + len(item)
        assert found >= 0, f"expected {item!r} after position {position} in the output:\n{output}"
        position = end


def test_every_port_is_its_original_with_only_imports_and_the_model_changed() -> None:
    assert check() == []
    assert sorted(CASES) == sorted(SAMPLES)
    assert len(SAMPLES) >= 40


def _marks(case: Case) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.filterwarnings(f"ignore::{spec}") for spec in case.expected_warnings]
    return [*marks, pytest.mark.slow] if case.slow else marks


@pytest.mark.parametrize("rel", [pytest.param(rel, marks=_marks(CASES[rel])) for rel in CASES])
def test_sample(rel: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # what a sample writes stays in the test's directory
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # temporary files too
    for name, value in CASES[rel].env.items():
        if not value:
            pytest.fail(f"{rel} needs {name}, which this machine cannot provide")
        monkeypatch.setenv(name, value)
    # Samples read their provider's endpoint before building the client that ``model()`` stands in for.
    monkeypatch.setenv("FOUNDRY_PROJECT_ENDPOINT", "http://127.0.0.1:9/unused")
    output = run_sample(rel, CASES[rel], tmp_path)
    assert_in_order(output, CASES[rel].expected)
    for saved in re.findall(r"file saved to: (\S+)", output):  # files a sample says it wrote exist
        assert Path(saved).is_file() and Path(saved).stat().st_size > 0, saved
    leftover = {key: replies for key, replies in parity_model.remaining().items() if replies}
    assert not leftover, f"the sample made fewer model calls than scripted: {leftover}"


def test_the_ports_import_agentnb_not_the_reference() -> None:
    for rel in SAMPLES:
        code = (PORTS / rel).read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) agent_framework", code, re.M), rel
    assert "agent_framework" not in sys.modules
