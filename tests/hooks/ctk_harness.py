"""agentnb as a host for the agent-hooks conformance test kit (``agent_hooks.ctk``).

The kit's vectors script a run (input, tools, model replies, interceptor verdicts) and check what the host
emitted and did. This harness runs each one through a real ``Agent`` with the bundle from
:func:`agentnb.create_agent_hooks_middleware` (or, for vectors that bring their own emitter, a host
declaration or approval redaction, :func:`agentnb.create_agent_hooks_middleware_from_emitter`, the host then
owning ``agent_startup`` / ``agent_shutdown`` as the SDK's reference host does). The model is agentnb's own
scripted client answering with the vector's replies; the tools are ``FunctionTool``s that follow the vector's
behaviour clauses.
"""

from __future__ import annotations

import uuid
from typing import Any

from agent_hooks import (
    AgentContextBuilder,
    ApprovalResolver,
    CompositionConfig,
    EnforcementMode,
    IdentityProvider,
    InterceptionBlocked,
    InterceptionEmitter,
    InterceptionRecord,
    InterceptionSuspended,
    Interceptor,
)
from agent_hooks.ctk import Capability, RunOutcome, RunRecord, Scenario, redact_paths
from agent_hooks.declaration import HostRegistry, HostSurface

from agentnb import (
    Agent,
    ChatResponse,
    Content,
    FunctionTool,
    Message,
    MiddlewareBundle,
    create_agent_hooks_middleware,
    create_agent_hooks_middleware_from_emitter,
)
from agentnb.local import ScriptedChatClient


class ToolReportedError(Exception):
    """A scripted tool's ``is_error`` answer: the tool fails, as a real one would."""


class AgentnbHarness:
    """One vector at a time: ``setup`` (or ``setup_declared``), ``run``, ``teardown``."""

    name = "agentnb"
    capabilities: frozenset[Capability] = frozenset(
        {
            Capability.MODEL_CALLS,
            Capability.TOOL_CALLS,
            Capability.INT64_JSON,
            Capability.BIGINT_JSON,
            Capability.HOST_DECLARATION,
        }
    )
    tool_seam_host_error = "terminate"  # a host_error deny at a tool point ends the run

    def __init__(self) -> None:
        self.scenario: Scenario | None = None
        self.bundle: MiddlewareBundle | None = None
        self.emitter: InterceptionEmitter | None = None  # set when the harness owns the session
        self.builder: AgentContextBuilder | None = None
        self.records: list[InterceptionRecord] = []
        self.tool_log: list[dict[str, Any]] = []

    def host_surface(self) -> HostSurface:
        return HostSurface.from_capabilities(sorted(c.value for c in self.capabilities), self.tool_seam_host_error)

    def setup(
        self,
        scenario: Scenario,
        interceptors: list[Interceptor],
        resolver: ApprovalResolver | None,
        mode: EnforcementMode,
        composition: CompositionConfig,
        identity_provider: str | None,
        redact_for_approval: list[str] | None = None,
    ) -> None:
        self.scenario = scenario
        provider: str | IdentityProvider | None = identity_provider
        if identity_provider == "ctk-fault":

            def fault(_context: Any) -> str:
                raise RuntimeError("ctk scripted provider fault")

            provider = IdentityProvider("ctk-fault", fault)
        paths = list(redact_for_approval or [])
        if not paths and interceptors:
            self.bundle = create_agent_hooks_middleware(
                interceptors,
                resolver=resolver,
                mode=mode,
                composition=composition,
                identity_provider=provider,
                record_sink=self.records.append,
            )
            return
        emitter = InterceptionEmitter(mode=mode, resolver=resolver, composition=composition, identity_provider=provider)
        for interceptor in interceptors:
            emitter.register(interceptor)
        if paths:
            emitter.set_approval_redactor(lambda context: redact_paths(context, paths))
        self._own_session(emitter)

    def setup_declared(self, scenario: Scenario, document: dict[str, Any], registry: HostRegistry) -> None:
        self.scenario = scenario
        self._own_session(InterceptionEmitter.from_declaration_value(document, registry))

    def _own_session(self, emitter: InterceptionEmitter) -> None:
        emitter.set_record_sink(self.records.append)
        self.emitter = emitter
        self.builder = AgentContextBuilder(agent_id="agentnb-ctk", framework="agentnb", session_id=uuid.uuid4().hex)
        self.bundle = create_agent_hooks_middleware_from_emitter(emitter, self.builder)

    def _tool(self, name: str) -> FunctionTool:
        assert self.scenario is not None
        spec = self.scenario.tools[name]

        def run(**args: Any) -> Any:
            value, is_error = spec.invoke(args)
            self.tool_log.append({"name": name, "args": dict(args)})
            if is_error:
                raise ToolReportedError(str(value))
            return value

        schema = {"type": "object", "properties": {}, "additionalProperties": True}
        return FunctionTool(run, name=name, description=f"scripted {name}", input_model=schema)

    def _replies(self) -> list[ChatResponse]:
        assert self.scenario is not None
        replies: list[ChatResponse] = []
        for step in self.scenario.model_script:
            contents: list[Content] = []
            if step.content is not None:
                contents.append(Content.from_text(str(step.content)))
            contents.extend(
                Content.from_function_call(str(c["id"]), str(c["name"]), arguments=dict(c.get("args") or {}))
                for c in step.tool_calls
            )
            replies.append(ChatResponse(messages=[Message("assistant", contents)], finish_reason=step.finish_reason))
        return replies

    async def run(self) -> RunRecord:
        assert self.scenario is not None and self.bundle is not None
        scenario = self.scenario
        agent = Agent(
            ScriptedChatClient(self._replies()),
            name="ctk",
            tools=[self._tool(name) for name in scenario.tools],
            middleware=[self.bundle],
        )
        outcome, final, error = RunOutcome.COMPLETED, None, None
        emitter, builder = self.emitter, self.builder
        try:
            if emitter is not None and builder is not None:
                await emitter.emit(builder.agent_startup(tools_registered=sorted(scenario.tools)))
            content = scenario.input["content"]
            role = scenario.input.get("role", "user")
            message = Message(role if role in ("user", "system") else "user", [str(content)])
            response = await agent.run([message])
            final = response.text
        except InterceptionBlocked:
            outcome = RunOutcome.BLOCKED
        except InterceptionSuspended:
            outcome = RunOutcome.SUSPENDED
        except Exception as failure:
            outcome, error = RunOutcome.ERROR, repr(failure)
        if emitter is not None and builder is not None:
            reason = "completed" if outcome is RunOutcome.COMPLETED else "error"
            await emitter.emit_unchecked(builder.agent_shutdown(reason=reason))
        return RunRecord(
            outcome=outcome,
            final_output=final,
            tool_invocations=list(self.tool_log),
            error=error,
            identities=[(r.input_identity, r.enforced_identity) for r in self.records],
            records=[r.to_wire() for r in self.records],
        )

    def teardown(self) -> None:
        self.scenario = self.bundle = self.emitter = self.builder = None
