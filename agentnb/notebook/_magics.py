"""The ``%%agent`` cell magic and the ``%agentnb`` line magic.

``%%agent NAME`` sends the cell body to the agent held in the variable ``NAME`` and streams the reply into
an :class:`~agentnb.notebook.AgentView`. A small input transformer turns such a cell into an awaited call,
so the cell stays busy while tokens stream (and "Run All" keeps its order) and returns as soon as the run
is done or waits for an approval; the approval cards stay live after the cell has finished.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from .. import _html as h
from .._approval_policy import ApprovalPolicy

if TYPE_CHECKING:
    from .._agents import Agent
    from ..workflows import Workflow

__all__ = [
    "AGENTNB_USAGE",
    "AGENT_USAGE",
    "AgentnbMagics",
    "agent_cell_transformer",
    "last_view",
    "remember_view",
    "run_agent_cell",
]

AGENT_USAGE = "usage: %%agent NAME [--session VAR] [--no-stream] [--approve ask|all|none|TOOL,SERVER:TOOL,...]"
AGENTNB_USAGE = (
    "usage: %agentnb traces [--last N] | runs [--all] [--last N] | meter on|off|auto | "
    "prices [MODEL=IN,OUT ...] [--clear] | record PATH | replay PATH | record --stop | devui [--port N] | "
    "devui --stop | help"
)


class _Parser(argparse.ArgumentParser):
    """An argparse parser that reports bad arguments as an IPython usage error (no traceback)."""

    def __init__(self, usage: str, **kwargs: Any) -> None:
        super().__init__(add_help=False, usage=usage, **kwargs)
        self._usage_line = usage

    def error(self, message: str) -> Any:  # argparse calls this and expects it not to return
        raise UsageError(f"{message}\n{self._usage_line}")


def _agent_parser() -> _Parser:
    parser = _Parser(AGENT_USAGE, prog="%%agent")
    parser.add_argument("name")
    parser.add_argument("--session", default=None)
    parser.add_argument("--no-stream", action="store_true")
    parser.add_argument("--approve", default="ask")
    return parser


def _policy(value: str) -> ApprovalPolicy | None:
    """``--approve``: ``ask`` leaves it to ``$AGENTNB_AUTO_APPROVE`` (else a card), the rest is a policy."""
    if value.strip().lower() == "ask":
        return None
    try:
        return ApprovalPolicy.parse(value)
    except ValueError as e:
        raise UsageError(
            f"--approve needs ask, all, none or tool names (server:name), got {value!r}\n{AGENT_USAGE}"
        ) from e


def _split(line: str, usage: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as e:
        raise UsageError(f"{e}\n{usage}") from None


def _resolve_agent(ip: Any, name: str) -> Any:
    if not name.isidentifier():
        raise UsageError(f"{name!r} is not a variable name\n{AGENT_USAGE}")
    if name not in ip.user_ns:
        raise UsageError(
            f"No variable {name!r} in this notebook; define it first, e.g. {name} = Agent(...)\n{AGENT_USAGE}"
        )
    agent = ip.user_ns[name]
    if not callable(getattr(agent, "run", None)):
        raise UsageError(f"{name!r} is a {type(agent).__name__}, not an agent (it has no run method)\n{AGENT_USAGE}")
    return agent


def _resolve_session(ip: Any, agent: Any, var: str | None) -> Any:
    if var is None:
        return None
    if not var.isidentifier():
        raise UsageError(f"--session needs a variable name, got {var!r}\n{AGENT_USAGE}")
    session = ip.user_ns.get(var)
    if session is None:
        # A new variable: start the conversation and keep it there for the next cells.
        session = agent.create_session()
        ip.user_ns[var] = session
    return session


_last_view: list[Any] = []


def last_view() -> Any:
    """Return the most recent live view: of a ``%%agent`` cell, or of a response or session waiting for approval.

    ``None`` before the first one.
    """
    return _last_view[-1] if _last_view else None


def remember_view(view: Any) -> None:
    """Make ``view`` what :func:`last_view` returns."""
    _last_view[:] = [view]


def _prepare(ip: Any, line: str, body: str) -> tuple[Any, Any, bool]:
    from ._harness import view_class_for

    args = _agent_parser().parse_args(_split(line, AGENT_USAGE))
    prompt = body.strip()
    if not prompt:
        raise UsageError(f"The cell body is the prompt and it is empty\n{AGENT_USAGE}")
    agent = _resolve_agent(ip, args.name)
    session = _resolve_session(ip, agent, args.session)
    view = view_class_for(agent)(agent, session=session, auto_approve=_policy(args.approve), stream=not args.no_stream)
    remember_view(view)
    return view, prompt, args.no_stream


async def run_agent_cell(ip: Any, line: str, body: str) -> None:
    """Run a ``%%agent`` cell: stream the reply into a view and return once the run settles.

    Args:
        ip: The shell.
        line: The magic's arguments.
        body: The cell body (the prompt).

    Raises:
        UsageError: Bad arguments (shown as a usage line, without a traceback).
    """
    view, prompt, no_stream = _prepare(ip, line, body)
    # Without streaming the view appears once the answer is complete.
    view.run(prompt, display=not no_stream)
    await view.wait()  # re-displays the settled view in this cell
    if no_stream:
        view.display()
    if view.error is not None:
        raise view.error


def agent_cell_transformer(lines: list[str]) -> list[str]:
    """Rewrite a ``%%agent`` cell into an awaited :func:`run_agent_cell` call (other cells pass through)."""
    if not lines:
        return lines
    first = lines[0]
    if not (first.startswith("%%agent") and (len(first) == 7 or first[7] in " \t\r\n")):
        return lines
    from IPython.core.getipython import get_ipython

    ip = get_ipython()
    if ip is None or not getattr(ip, "autoawait", False):
        return lines  # no top-level await here (%autoawait off): the plain cell magic runs it instead
    arguments = first[7:].strip()
    body = "".join(lines[1:])
    call = (
        "await __import__('agentnb.notebook._magics', fromlist=['run_agent_cell'])"
        f".run_agent_cell(get_ipython(), {arguments!r}, {body!r})\n"
    )
    return [call]


@magics_class
class AgentnbMagics(Magics):
    """``%%agent`` and ``%agentnb``, registered by ``%load_ext agentnb``."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self._swapped: dict[int, tuple[Any, Any]] = {}
        self._cassette_mode: str | None = None
        self._devui_urls: list[str] = []

    @cell_magic("agent")  # pyright: ignore[reportUntypedFunctionDecorator] - IPython's decorators are untyped
    def agent(self, line: str, cell: str) -> None:
        """Send the cell to an agent: ``%%agent NAME [--session VAR] [--no-stream] [--approve POLICY]``.

        The body is the prompt; the reply streams into a live view with approval cards. ``--session VAR``
        continues the conversation kept in ``VAR`` (created when missing). ``--approve all|none|TOOL,...``
        answers approvals without asking (for "Run All").
        """
        # Reached only where the awaiting transformer is not installed (e.g. a shell without autoawait):
        # start the run in the background when a loop is running, else run it to completion here.
        view, prompt, _no_stream = _prepare(self.shell, line, cell)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(view.controller.run(prompt))
            view.display()
            return
        view.run(prompt, display=True)

    @line_magic("agentnb")  # pyright: ignore[reportUntypedFunctionDecorator] - IPython's decorators are untyped
    def agentnb(self, line: str) -> Any:
        """``%agentnb traces [--last N] | record PATH | replay PATH | record --stop | devui [--port N] | help``."""
        words = _split(line, AGENTNB_USAGE)
        if not words or words[0] in {"help", "-h", "--help"}:
            print(AGENTNB_USAGE)
            return None
        command, rest = words[0], words[1:]
        handler = {
            "traces": self._traces,
            "runs": self._runs,
            "meter": self._meter,
            "prices": self._prices,
            "record": self._record,
            "replay": self._replay,
            "devui": self._devui,
        }.get(command)
        if handler is None:
            raise UsageError(f"unknown command {command!r}\n{AGENTNB_USAGE}")
        return handler(rest)

    # -- %agentnb traces -----------------------------------------------------------------------------------
    def _traces(self, rest: list[str]) -> Any:
        parser = _Parser(AGENTNB_USAGE, prog="%agentnb traces")
        parser.add_argument("--last", type=int, default=1)
        args = parser.parse_args(rest)
        if args.last < 1:
            raise UsageError(f"--last must be >= 1, got {args.last}\n{AGENTNB_USAGE}")
        from ._trace import TraceView

        return TraceView(last=args.last)

    # -- %agentnb runs / meter / prices -------------------------------------------------------------------
    def _runs(self, rest: list[str]) -> Any:
        parser = _Parser(AGENTNB_USAGE, prog="%agentnb runs")
        parser.add_argument("--last", type=int, default=20)
        parser.add_argument("--all", action="store_true")
        args = parser.parse_args(rest)
        if args.last < 1:
            raise UsageError(f"--last must be >= 1, got {args.last}\n{AGENTNB_USAGE}")
        from ._cells import notebook_runs

        return notebook_runs(last=args.last, everywhere=args.all, user_ns=self._user_ns())

    def _meter(self, rest: list[str]) -> None:
        from ._extension import cell_tracker

        if len(rest) != 1 or rest[0] not in {"on", "off", "auto"}:
            raise UsageError(f"meter takes on, off or auto\n{AGENTNB_USAGE}")
        tracker = cell_tracker()
        if tracker is not None:
            tracker.meter.mode = rest[0]
        print(f"agentnb meter: {rest[0]}")

    def _prices(self, rest: list[str]) -> None:
        from ._meter import get_prices, set_prices

        if rest == ["--clear"]:
            set_prices(None)
        elif rest:
            table = get_prices()
            for item in rest:
                model, _, pair = item.partition("=")
                values = pair.split(",")
                try:
                    if not model or len(values) != 2:
                        raise ValueError
                    table[model] = (float(values[0]), float(values[1]))
                except ValueError:
                    raise UsageError(
                        f"prices takes MODEL=IN,OUT (USD per 1M tokens), got {item!r}\n{AGENTNB_USAGE}"
                    ) from None
            try:
                set_prices(table)
            except ValueError as e:
                raise UsageError(f"{e}\n{AGENTNB_USAGE}") from None
        table = get_prices()
        if not table:
            print("No prices set: the meter shows no cost. %agentnb prices gpt-4o-mini=0.15,0.60")
        for model, (tokens_in, tokens_out) in sorted(table.items()):
            print(f"{model}: ${tokens_in:g} in / ${tokens_out:g} out per 1M tokens")

    # -- %agentnb record / replay ------------------------------------------------------------------------
    def _agents(self) -> list[Agent]:
        from .._agents import Agent

        seen: dict[int, Agent] = {}
        for value in list(self._user_ns().values()):
            if isinstance(value, Agent):
                agent = cast("Agent[Any]", value)
                seen.setdefault(id(agent), agent)
        return list(seen.values())

    def _restore_clients(self) -> int:
        restored = 0
        for agent, client in self._swapped.values():
            agent.client = client
            restored += 1
        self._swapped.clear()
        self._cassette_mode = None
        return restored

    def _swap_clients(self, make: Callable[[Any], Any], mode: str) -> int:
        self._restore_clients()
        count = 0
        for agent in self._agents():
            self._swapped[id(agent)] = (agent, agent.client)
            agent.client = make(agent.client)
            count += 1
        self._cassette_mode = mode
        return count

    def _cassette_args(self, rest: list[str], command: str) -> Any:
        parser = _Parser(AGENTNB_USAGE, prog=f"%agentnb {command}")
        parser.add_argument("path", nargs="?")
        parser.add_argument("--stop", action="store_true")
        args = parser.parse_args(rest)
        if not args.stop and not args.path:
            raise UsageError(f"{command} needs a cassette PATH\n{AGENTNB_USAGE}")
        return args

    def _record(self, rest: list[str]) -> None:
        args = self._cassette_args(rest, "record")
        if args.stop:
            print(f"Stopped {self._cassette_mode or 'cassettes'}: {self._restore_clients()} agent(s) restored.")
            return
        from ..local import RecordingChatClient

        recorders: dict[int, Any] = {}
        shared: list[Any] = []

        def record(client: Any) -> Any:
            # One recorder per client (agents sharing a client share its recorder); all recorders share one
            # interaction list, so each write of the cassette holds every agent's calls, in order.
            if id(client) not in recorders:
                recorder = RecordingChatClient(client, args.path)
                recorder.interactions = shared
                recorders[id(client)] = recorder
            return recorders[id(client)]

        count = self._swap_clients(record, "recording")
        print(f"Recording model traffic of {count} agent(s) to {args.path} (stop with %agentnb record --stop).")

    def _replay(self, rest: list[str]) -> None:
        args = self._cassette_args(rest, "replay")
        if args.stop:
            print(f"Stopped {self._cassette_mode or 'cassettes'}: {self._restore_clients()} agent(s) restored.")
            return
        from ..exceptions import CassetteError
        from ..local import ReplayChatClient

        try:
            replay = ReplayChatClient(args.path)  # read now: a missing or broken cassette fails here, not mid-run
        except CassetteError as e:
            raise UsageError(
                f"{e}\n(in a notebook: %agentnb record {args.path}, run the cells, %agentnb record --stop)"
            ) from None
        count = self._swap_clients(lambda _client: replay, "replay")
        print(f"Replaying {args.path} for {count} agent(s): no network or API key needed.")

    # -- %agentnb devui ----------------------------------------------------------------------------------
    def _devui(self, rest: list[str]) -> Any:
        parser = _Parser(AGENTNB_USAGE, prog="%agentnb devui")
        parser.add_argument("--port", type=int, default=None)
        parser.add_argument("--stop", action="store_true")
        args = parser.parse_args(rest)
        from .. import devui

        if args.stop:
            stopped = sum(devui.stop(url) for url in self._devui_urls)
            self._devui_urls.clear()
            print(f"Stopped {stopped} DevUI server(s).")
            return None
        entities = self._entities()
        url = devui.serve(entities or None, port=args.port)
        self._devui_urls.append(url)
        from IPython.core.display import HTML

        names = ", ".join(_entity_name(e) for e in entities) or "the built-in demos"
        return HTML(
            h.wrap(
                f"<div class='anb-card'>DevUI for {h.escape(names)}: "
                f'<a href="{h.escape(url)}" target="_blank" rel="noopener">{h.escape(url)}</a></div>'
            )
        )

    def _entities(self) -> list[Agent | Workflow]:
        from ..workflows import Workflow

        entities: list[Agent | Workflow] = [*self._agents()]
        seen = {id(e) for e in entities}
        for value in list(self._user_ns().values()):
            if isinstance(value, Workflow) and id(value) not in seen:
                entities.append(value)
                seen.add(id(value))
        return entities

    def _user_ns(self) -> dict[str, Any]:
        return cast("dict[str, Any]", self.shell.user_ns) if self.shell is not None else {}

    def close(self) -> None:
        """Undo what the magics changed: restore swapped clients, stop DevUI servers they started."""
        self._restore_clients()
        if self._devui_urls:
            from .. import devui

            for url in self._devui_urls:
                devui.stop(url)
            self._devui_urls.clear()


def _entity_name(entity: Agent | Workflow) -> str:
    return entity.name or entity.id
