"""Typed errors raised by agentnb.

Two roots keep "you called it wrong" apart from "it failed while running": argument mistakes raise the
built-ins (``ValueError``, ``TypeError``); everything that goes wrong at run time derives from
:class:`AgentnbError` and carries the data needed to act on it.

```
AgentnbError
├── ServiceError                     a model provider failed
│   ├── ServiceResponseError         HTTP 4xx/5xx (status_code, body)
│   │   ├── ServiceAuthenticationError   401/403
│   │   ├── RateLimitError               429
│   │   └── ContentFilterError           the provider refused the content
│   ├── ServiceTimeoutError          no answer in time
│   └── ServiceConnectionError       could not reach the provider, or it hung up mid-response
├── ServiceInitializationError       a client is missing configuration (key, model, base URL)
│   └── SettingNotFoundError         a required setting is in neither the arguments nor the environment
├── ChatClientError                  the model's output cannot be used
│   └── StructuredOutputError        the reply does not match the requested schema (also a ValueError)
├── ToolError                        a tool cannot be defined or run
│   ├── ToolExecutionError           a tool failed while running
│   │   └── ShellExecutionError      the shell tool could not run a command (no shell, it died)
│   │       ├── ShellCommandError    the ShellPolicy refused the command
│   │       ├── ShellTimeoutError    the command ran past its time limit
│   │       └── DockerNotAvailableError  the container runtime is missing or does not answer
│   │                                (also a RuntimeError)
│   ├── ToolArgumentsError           the model's arguments do not fit the tool's schema (also a ValueError)
│   ├── UnknownToolError             the model called a tool that does not exist (also a KeyError)
│   └── ToolSchemaError              a tool's signature cannot be turned into a JSON schema
├── ApprovalError                    an approval answer that matches no pending request
├── MiddlewareTermination            middleware ended the run early (control flow, carries the result)
├── AgentHooksError                  agent-hooks enforcement could not be applied (the run fails closed)
├── SerializationError               JSON (de)serialization with type tags failed
├── SessionError                     a session is missing where one is required, or cannot be loaded or saved
│   ├── SessionCorruptError          a stored session is unreadable (the file is kept)
│   └── SessionOwnerError            a per-owner store finds no owner id in the session (also a RuntimeError)
├── CassetteError                    record/replay failed
│   └── CassetteMissError            a request the cassette does not hold (shows the nearest one)
├── MCPError                         an MCP server failed (names the server)
│   ├── MCPConnectionError           could not start or reach the server, or it died
│   └── MCPTimeoutError              the server did not answer in time
├── WorkflowError                    a workflow cannot be built or run
│   ├── WorkflowValidationError      the graph is invalid (names the nodes)
│   │   ├── EdgeDuplicationError     two edges join the same executors
│   │   ├── TypeCompatibilityError   an edge's source sends nothing its target accepts
│   │   ├── GraphConnectivityError   executors the start cannot reach
│   │   └── HandlerSignatureError    a handler's hints cannot be used (also TypeError, ValueError)
│   ├── WorkflowRunError             an executor failed or a limit was hit during a run
│   ├── ExecutorInputError           a message no handler of the executor takes (also TypeError, RuntimeError)
│   └── CheckpointError              a checkpoint cannot be used
│       ├── CheckpointNotFoundError
│       ├── CheckpointCorruptError   unreadable checkpoint data (the file is kept)
│       └── CheckpointMismatchError  the checkpoint belongs to another graph
├── StoreError                       the SQLite run store failed or has an unknown schema
├── EvalNotPassedError               an evaluation has failing or errored items (names them)
├── FeatureNotAvailableError         a requested feature is not part of this agentnb (also a NotImplementedError)
├── DeclarativeLoaderError           a YAML agent or workflow definition is invalid (names the line)
│   ├── ProviderLookupError          the model provider named in the YAML is unknown
│   └── DeclarativeWorkflowError     a declarative workflow cannot be built
├── DeclarativeActionError           a declarative workflow action failed while running (names the action)
├── A2AError                         a remote A2A agent failed or answered with an error
└── SkillError                       an agent skill cannot be used
    ├── SkillSecurityError           refused at a trust boundary: a link, a path outside the skill,
    │                                a hostile archive, a script from a source that may not run any
    │                                (also a ValueError)
    └── SkillScriptError             a skill script failed, timed out or could not start (also a
                                     ToolExecutionError, so the model is told what happened)
```

Agent Framework's exception names are aliases of the matching classes (``AgentFrameworkException`` is
``AgentnbError``, ``ChatClientException`` is ``ServiceError``, ``WorkflowException`` is ``WorkflowError``,
...), so ``except`` clauses written for it keep working.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

__all__ = [
    "A2AError",
    "AgentFrameworkException",
    "AgentHooksError",
    "AgentnbError",
    "ApprovalError",
    "CassetteError",
    "CassetteMissError",
    "ChatClientContentFilterException",
    "ChatClientError",
    "ChatClientException",
    "ChatClientInvalidAuthException",
    "CheckpointCorruptError",
    "CheckpointError",
    "CheckpointMismatchError",
    "CheckpointNotFoundError",
    "ContentFilterError",
    "DeclarativeActionError",
    "DeclarativeLoaderError",
    "DeclarativeWorkflowError",
    "DockerNotAvailableError",
    "EdgeDuplicationError",
    "EvalNotPassedError",
    "ExecutorDuplicationError",
    "ExecutorInputError",
    "FeatureNotAvailableError",
    "GraphConnectivityError",
    "HandlerSignatureError",
    "IntegrationContentFilterException",
    "IntegrationException",
    "IntegrationInitializationError",
    "IntegrationInvalidAuthException",
    "IntegrationInvalidRequestException",
    "IntegrationInvalidResponseException",
    "MCPConnectionError",
    "MCPError",
    "MCPTimeoutError",
    "MiddlewareError",
    "MiddlewareTermination",
    "ProviderLookupError",
    "RateLimitError",
    "SerializationError",
    "ServiceAuthenticationError",
    "ServiceConnectionError",
    "ServiceError",
    "ServiceInitializationError",
    "ServiceResponseError",
    "ServiceTimeoutError",
    "SessionCorruptError",
    "SessionError",
    "SessionOwnerError",
    "SettingNotFoundError",
    "ShellCommandError",
    "ShellExecutionError",
    "ShellTimeoutError",
    "SkillError",
    "SkillScriptError",
    "SkillSecurityError",
    "StoreError",
    "StructuredOutputError",
    "ToolArgumentsError",
    "ToolError",
    "ToolException",
    "ToolExecutionError",
    "ToolExecutionException",
    "ToolSchemaError",
    "TypeCompatibilityError",
    "UnknownToolError",
    "UserInputRequiredError",
    "ValidationTypeEnum",
    "WorkflowCheckpointException",
    "WorkflowError",
    "WorkflowException",
    "WorkflowRunError",
    "WorkflowRunnerException",
    "WorkflowValidationError",
]


class AgentnbError(Exception):
    """Base class of every run-time error agentnb raises.

    Attributes:
        end_run: Set on an error raised inside a tool to end the whole run with it, instead of reporting
            it to the model as the tool's result (for example an MCP tool with ``on_tool_error="raise"``).
    """

    end_run: bool = False

    def __init__(self, *args: object, inner_exception: BaseException | None = None) -> None:
        """``inner_exception`` (the error this one wraps) becomes the second argument and the cause."""
        super().__init__(*args, *(() if inner_exception is None else (inner_exception,)))
        if inner_exception is not None:
            self.__cause__ = inner_exception


class ServiceError(AgentnbError):
    """A model provider failed to answer."""


class ServiceResponseError(ServiceError):
    """The provider answered with an HTTP error.

    Attributes:
        status_code: The HTTP status, when there was one.
        body: The server's message or parsed error body.
    """

    def __init__(self, message: str, *, status_code: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body


class ServiceAuthenticationError(ServiceResponseError):
    """The provider rejected the credentials (401/403)."""


class RateLimitError(ServiceResponseError):
    """The provider is rate limiting this client (429).

    Attributes:
        retry_after: Seconds the server asked to wait before trying again (its ``retry-after`` header), when
            it said.
    """

    def __init__(
        self, message: str, *, status_code: int | None = None, body: Any = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status_code=status_code, body=body)
        self.retry_after = retry_after


class ContentFilterError(ServiceResponseError):
    """The provider refused the request or reply because of its content filter."""


class ServiceTimeoutError(ServiceError):
    """The provider did not answer in time."""


class ServiceConnectionError(ServiceError):
    """The provider could not be reached, or the connection dropped while it was answering.

    Attributes:
        partial_text: The reply's text that had arrived before a connection dropped mid-response.
    """

    def __init__(self, message: str, *, partial_text: str = "") -> None:
        super().__init__(message)
        self.partial_text = partial_text


class ServiceInitializationError(AgentnbError):
    """A client cannot be created: configuration such as an API key or model is missing."""


class SettingNotFoundError(ServiceInitializationError):
    """A required setting was given neither as an argument nor in the environment (see ``load_settings``)."""


class ChatClientError(AgentnbError):
    """The model's output cannot be used."""


class StructuredOutputError(ChatClientError, ValueError):
    """The model's reply does not validate against the requested ``response_format``.

    Also a ``ValueError``, what the reference raises for a reply that is not the JSON a schema asks for; the
    error for a pydantic model or another type is a pydantic ``ValidationError`` too.

    Attributes:
        schema_name: The name of the requested schema.
        text: The model's raw reply.
    """

    def __init__(self, message: str, *, schema_name: str = "", text: str = "") -> None:
        super().__init__(message)
        self.schema_name = schema_name
        self.text = text


class ToolError(AgentnbError):
    """A tool cannot be defined or run."""


class ToolExecutionError(ToolError):
    """A tool failed while running; raised when a run is configured to fail on tool errors."""


class UserInputRequiredError(ToolError):
    """A tool (an agent used as a tool) needs input from the person that it cannot ask for itself.

    Attributes:
        contents: What was asked: approval requests, OAuth consent requests.
    """

    def __init__(self, message: str = "", *, contents: list[Any] | None = None) -> None:
        super().__init__(message or "The tool needs input from the user.")
        self.contents: list[Any] = list(contents or [])


class ShellExecutionError(ToolExecutionError):
    """The shell tool could not run a command: no shell to start, or the shell failed."""


class ShellCommandError(ShellExecutionError):
    """The shell tool's :class:`~agentnb.harness.ShellPolicy` refused the command (the model is told why)."""


class ShellTimeoutError(ShellExecutionError):
    """A shell command ran past its time limit (raised by executors that report a time-out as an error)."""


class DockerNotAvailableError(ShellExecutionError, RuntimeError):
    """The container shell tool cannot reach its runtime: no CLI, no daemon answering, or no container started.

    Also a ``RuntimeError``, as the reference raises.
    """


class ToolArgumentsError(ToolError, ValueError, TypeError):
    """The model's arguments for a tool do not fit its schema.

    A ``TypeError`` as the reference raises for invalid arguments, and a ``ValueError`` as agentnb did before.
    """


class UnknownToolError(ToolError, KeyError):
    """The model called a tool that does not exist, with ``terminate_on_unknown_calls`` set.

    A ``KeyError`` too, which is what the reference raises there.
    """

    def __str__(self) -> str:
        return Exception.__str__(self)  # KeyError would quote the message


class ToolSchemaError(ToolError):
    """A function's signature cannot be described as a JSON schema."""


class ApprovalError(AgentnbError):
    """An approval response that answers no pending request (unknown, already answered or forged)."""


class MiddlewareError(AgentnbError, TypeError):
    """A middleware cannot be used: its kind (agent, chat, function) is unclear or it takes too few arguments."""


class MiddlewareTermination(AgentnbError):
    """Raised by middleware to end a run early; the run returns ``result`` if one is given."""

    def __init__(self, message: str = "Middleware terminated the run.", *, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class AgentHooksError(AgentnbError):
    """The agent-hooks middleware could not apply its enforcement, so the run ends instead of going on unguarded.

    For example a transform that cannot be written back into the run, a result it cannot guard, or the bundle
    installed in part. A verdict's own deny is ``agent_hooks.InterceptionBlocked``, not this.
    """


class SerializationError(AgentnbError):
    """A value cannot be turned into tagged JSON, or tagged JSON cannot be turned back.

    Attributes:
        tag: The type tag or type id that could not be restored, when that was the problem.
    """

    def __init__(self, message: str, *, tag: str | None = None) -> None:
        super().__init__(message)
        self.tag = tag


class SessionError(AgentnbError):
    """A session is missing where one is required (message injection), or cannot be loaded or saved."""


class SessionCorruptError(SessionError, ValueError):
    """A stored session is unreadable; the file is left in place for inspection (moved aside by the keyed
    ``FileSessionStore.get``). A ``ValueError``, as the reference raises for an unreadable snapshot."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class SessionOwnerError(SessionError, RuntimeError):
    """A store that keeps data per owner found no owner id in ``session.state`` (a ``RuntimeError``, as in the
    reference)."""


class CassetteError(AgentnbError):
    """Recording or replaying model traffic failed."""


class CassetteMissError(CassetteError):
    """The replayed request is not in the cassette.

    Attributes:
        nearest: The closest recorded request, to show what differs.
    """

    def __init__(self, message: str, *, nearest: Any = None) -> None:
        super().__init__(message)
        self.nearest = nearest


class MCPError(AgentnbError):
    """An MCP server failed.

    Attributes:
        server: The name of the MCP tool/server the error is about.
    """

    def __init__(self, message: str, *, server: str = "") -> None:
        super().__init__(message)
        self.server = server


class MCPConnectionError(MCPError):
    """The MCP server could not be started or reached, or it died."""


class MCPTimeoutError(MCPError):
    """The MCP server did not answer within the configured timeout."""


class WorkflowError(AgentnbError):
    """A workflow cannot be built or run."""


class ValidationTypeEnum(str, Enum):
    """Which check refused a workflow graph (``WorkflowValidationError.validation_type``)."""

    EDGE_DUPLICATION = "EDGE_DUPLICATION"
    EXECUTOR_DUPLICATION = "EXECUTOR_DUPLICATION"
    TYPE_COMPATIBILITY = "TYPE_COMPATIBILITY"
    GRAPH_CONNECTIVITY = "GRAPH_CONNECTIVITY"
    HANDLER_OUTPUT_ANNOTATION = "HANDLER_OUTPUT_ANNOTATION"
    OUTPUT_VALIDATION = "OUTPUT_VALIDATION"


class WorkflowValidationError(WorkflowError):
    """The workflow graph is invalid; the message names the executors involved.

    Attributes:
        message: The message without the ``[TYPE]`` prefix ``str()`` adds when the check is known.
        validation_type: The check that refused the graph, when it is one of :class:`ValidationTypeEnum`'s.
    """

    validation_type: ValidationTypeEnum | None = None

    def __init__(self, message: str = "", validation_type: ValidationTypeEnum | None = None) -> None:
        super().__init__(message)
        self.message = message
        if validation_type is not None:
            self.validation_type = validation_type

    def __str__(self) -> str:
        kind = self.validation_type
        return f"[{kind.value}] {self.message}" if kind is not None else self.message


class EdgeDuplicationError(WorkflowValidationError):
    """Two edges connect the same pair of executors.

    Attributes:
        edge_id: The duplicated edge, ``"source->target"``.
    """

    validation_type = ValidationTypeEnum.EDGE_DUPLICATION

    def __init__(self, edge_id: str, detail: str = "") -> None:
        super().__init__(f"Duplicate edge detected: {edge_id}. Each edge in the workflow must be unique{detail}.")
        self.edge_id = edge_id


class ExecutorDuplicationError(WorkflowValidationError, ValueError):
    """Two different executors share one id in a graph.

    Also a ``ValueError``, which the reference raises here; like it, ``str()`` is the bare message.
    """

    validation_type = ValidationTypeEnum.EXECUTOR_DUPLICATION

    def __str__(self) -> str:
        return self.message


class TypeCompatibilityError(WorkflowValidationError):
    """An edge's source never sends a type its target accepts (read from the handlers' hints).

    Attributes:
        source_executor_id: The sending executor.
        target_executor_id: The receiving executor.
        source_types: What the source sends (for a fan-in: what the target receives, ``list[...]``).
        target_types: What the target accepts.
    """

    validation_type = ValidationTypeEnum.TYPE_COMPATIBILITY

    def __init__(
        self,
        source_executor_id: str,
        target_executor_id: str,
        source_types: list[Any],
        target_types: list[Any],
        detail: str = "",
    ) -> None:
        def describe(hint: Any) -> str:
            return (
                hint.__qualname__
                if isinstance(hint, type) and not getattr(hint, "__args__", None)
                else (repr(hint).replace("typing.", ""))
            )

        super().__init__(
            f"Type incompatibility between executors '{source_executor_id}' -> '{target_executor_id}'. Source "
            f"executor outputs types {[describe(t) for t in source_types]} but target executor can only handle "
            f"types {[describe(t) for t in target_types]}.{detail}"
        )
        self.source_executor_id = source_executor_id
        self.target_executor_id = target_executor_id
        self.source_types = source_types
        self.target_types = target_types


class GraphConnectivityError(WorkflowValidationError):
    """Executors the start executor cannot reach (they would never run)."""

    validation_type = ValidationTypeEnum.GRAPH_CONNECTIVITY

    def __init__(self, message: str) -> None:
        super().__init__(message)


class WorkflowRunError(WorkflowError):
    """An executor failed, or a limit was reached, while a workflow ran.

    When an executor raised, the error ``run()`` raises is also an instance of that exception's class (and
    has it as ``__cause__``), so ``except ValueError:`` around a run catches a handler's ``ValueError``.
    """


class HandlerSignatureError(WorkflowValidationError, TypeError, ValueError):
    """A handler's parameters or type hints cannot be used: no ``WorkflowContext`` hint on its context, an
    unresolved ``TypeVar``, or something that is not a type inside ``WorkflowContext[...]``.

    Also a ``TypeError`` and a ``ValueError`` (the reference raises ``ValueError``).
    """


class ExecutorInputError(WorkflowError, TypeError, RuntimeError):
    """A message none of an executor's handlers takes: a workflow input the start executor cannot handle, or an
    edited input for re-running one executor. Also a ``RuntimeError``, which the reference raises for the former.

    Attributes:
        executor_id: The executor the message was meant for.
        accepted: The types its handlers take, as readable names.
        got: The type name of the value given.
    """

    def __init__(self, message: str, *, executor_id: str, accepted: list[str], got: str) -> None:
        super().__init__(message)
        self.executor_id = executor_id
        self.accepted = accepted
        self.got = got


class CheckpointError(WorkflowError):
    """A checkpoint cannot be used."""


class CheckpointNotFoundError(CheckpointError):
    """No checkpoint has the requested id."""


class CheckpointCorruptError(CheckpointError):
    """Stored checkpoint data is unreadable; it is left in place for inspection."""


class CheckpointMismatchError(CheckpointError):
    """The checkpoint was written by a different workflow graph."""


class DeclarativeLoaderError(AgentnbError):
    """A YAML agent or workflow definition is invalid; ``source`` and ``line`` say where."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None) -> None:
        where = f"{source or '<yaml>'}, line {line}: " if line is not None else (f"{source}: " if source else "")
        super().__init__(f"{where}{message}")
        self.source = source
        self.line = line


class ProviderLookupError(DeclarativeLoaderError):
    """The model provider (``provider``/``apiType``) named in a YAML agent is not one agentnb knows."""


class DeclarativeWorkflowError(DeclarativeLoaderError):
    """A declarative workflow cannot be built: unknown action kind, missing agent or tool, bad goto target."""


class DeclarativeActionError(AgentnbError):
    """A declarative workflow action failed while running; ``action_id`` names it."""

    def __init__(self, message: str, *, action_id: str | None = None) -> None:
        super().__init__(f"Action {action_id!r}: {message}" if action_id else message)
        self.action_id = action_id


class A2AError(AgentnbError):
    """A remote A2A agent failed, answered with an error, or could not be reached."""


class StoreError(AgentnbError):
    """The SQLite run store failed, or holds a schema this version cannot read."""


class EvalNotPassedError(AgentnbError):
    """An evaluation did not pass: some items failed a check or errored.

    Attributes:
        failed_items: The ids of the items that failed or errored (``"item_id:status"``), as the message names
            them.
    """

    def __init__(self, message: str, *, failed_items: list[str] | None = None) -> None:
        super().__init__(message)
        self.failed_items = list(failed_items or [])


class FeatureNotAvailableError(AgentnbError, NotImplementedError):
    """A requested feature is not part of this agentnb; the message names it and what to do instead.

    Attributes:
        feature: What is missing (for example ``"skills"``).
    """

    def __init__(self, message: str, *, feature: str) -> None:
        super().__init__(message)
        self.feature = feature


class SkillError(AgentnbError):
    """An agent skill cannot be discovered, loaded or run."""


class SkillSecurityError(SkillError, ValueError):
    """A skill operation was refused at a trust boundary (links, paths outside the skill, hostile archives)."""


class SkillScriptError(SkillError, ToolExecutionError):
    """A skill script failed, timed out or could not be started; carries what is known about the run.

    Args:
        message: What happened and what to do.
        script: The script's name.
        exit_code: The process's exit code, if it ended.
        output: What it printed before failing (stdout and stderr, possibly cut short).
    """

    def __init__(
        self, message: str, *, script: str | None = None, exit_code: int | None = None, output: str = ""
    ) -> None:
        super().__init__(message)
        self.script = script
        self.exit_code = exit_code
        self.output = output


# Agent Framework's names for the same errors, so `except` clauses written for it keep working.
AgentFrameworkException = AgentnbError
ChatClientException = ServiceError
ChatClientInvalidAuthException = ServiceAuthenticationError
ChatClientContentFilterException = ContentFilterError
ToolException = ToolError
ToolExecutionException = ToolExecutionError
WorkflowException = WorkflowError
WorkflowRunnerException = WorkflowRunError
WorkflowCheckpointException = CheckpointError
# Integrations (external services a tool or provider wraps) fail the way model providers do.
IntegrationException = ServiceError
IntegrationInitializationError = ServiceInitializationError
IntegrationInvalidAuthException = ServiceAuthenticationError
IntegrationInvalidRequestException = ServiceResponseError
IntegrationInvalidResponseException = ServiceResponseError
IntegrationContentFilterException = ContentFilterError
