"""agentnb side by side with Agent Framework, LangGraph, Pydantic AI and the OpenAI Agents SDK.

Run from anywhere (Python 3.10+)::

    python benchmarks/peers/run.py                 # full run, about 10 minutes on 2 busy cores
    python benchmarks/peers/run.py --quick         # fewer rounds, shorter samples (a smoke test)
    python benchmarks/peers/run.py --json out.json # also write every sample
    python benchmarks/peers/run.py --compare-agentnb REF  # agentnb at git REF vs this checkout, no peers

The first run creates a virtual environment (``benchmarks/peers/.venv``, or ``$AGENTNB_PEERS_VENV``) with
the pinned peer frameworks from PyPI and agentnb installed from this checkout (editable), then re-runs
itself inside it. The peers live only there: agentnb never depends on them.

Every framework runs in its own worker process (``worker.py``) on an instant in-process fake model written
with that framework's own model extension API (``adapters/``). The driver alternates between the workers,
sample by sample and in a rotating order, so drifting load on the machine hits every framework alike, and
reports medians. Rates use CPU time of the worker process (``time.process_time``, all threads) because wall
time on a shared machine also counts other processes; wall-time medians are printed too.

``--compare-agentnb REF`` measures agentnb against itself instead: one worker imports agentnb from a copy of
git ``REF`` (exported with ``git archive``; a directory holding a checkout works too), the other from this
checkout, both running this checkout's workloads in the current interpreter (no peers, no virtual
environment). The report gives both medians, the change in cost and the spread of the samples.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import venv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VENV = Path(os.environ.get("AGENTNB_PEERS_VENV", HERE / ".venv"))
PEERS = (
    "agent-framework-core==1.23.0",
    "agent-framework-devui==1.0.0b261022",  # the reference's server (workload 11)
    "langgraph==1.2.22",
    "pydantic-ai-slim==2.68.0",
    "openai-agents==0.24.0",
)
# agentnb's server (workload 11) mounts A2A and MCP beside the Responses API: it needs those extras.
AGENTNB = "{repo}[a2a,mcp]"

sys.path.insert(0, str(HERE))

from adapters import CHUNKS, FRAMEWORKS, IMPORTS, LABELS, WIDTH  # noqa: E402

# (key, workload run by the worker, title, unit)
RATE_WORKLOADS = (
    ("2", "turn", "2. one agent turn, fresh conversation", "turns/s"),
    ("3", "tool_turn", "3. one turn with one tool call round trip", "turns/s"),
    ("4", "stream_turn", f"4. streamed turn of {CHUNKS} chunks", "µs/chunk"),
    ("5", "chain", f"5. workflow chain of {WIDTH} executors", "runs/s"),
    ("6", "fan", f"6. fan-out 1->{WIDTH}->1", "runs/s"),
    ("7", "chain_checkpointed", "7. workload 5, checkpoint after every step", "runs/s"),
    ("10", "harness_turn", "10. harness agent turn (todo, mode, file memory in RAM), fresh session", "turns/s"),
    ("11", "served_turn", "11. served request: POST /v1/responses, one turn (ASGI, in process)", "requests/s"),
)
ISOLATED = {"served_turn"}
"""Workloads measured in a worker of their own: DevUI's server sets a global OpenTelemetry tracer provider,
which would make every later workload of its process record spans."""


# ---------------------------------------------------------------------------------------------- environment


def venv_python() -> Path:
    return VENV / "bin" / "python" if os.name != "nt" else VENV / "Scripts" / "python.exe"


def inside_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def ensure_venv() -> None:
    """Create the peers' environment if needed and re-run this script inside it."""
    python = venv_python()
    stamp = VENV / "agentnb-peers.txt"
    agentnb = AGENTNB.format(repo=REPO)
    wanted = "\n".join([*PEERS, f"-e {agentnb}"])
    if not python.exists():
        print(f"creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    if not stamp.exists() or stamp.read_text() != wanted:
        print("installing " + ", ".join(PEERS) + " and agentnb (editable) ...", flush=True)
        started = time.perf_counter()
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PEERS, "-e", agentnb],
            check=True,
        )
        stamp.write_text(wanted)
        print(f"installed in {time.perf_counter() - started:.0f} s", flush=True)
    os.execv(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]])


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{kb / 1024**2:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "os": platform.platform(terse=True),
        "python": platform.python_version(),
    }


def load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


# ---------------------------------------------------------------------------------------------- workers


class Worker:
    """A framework's worker process, spoken to one JSON line at a time.

    ``pythonpath`` puts a checkout first on the worker's import path, so its ``agentnb`` is the one measured
    (``--compare-agentnb``); the workloads themselves always come from this checkout's ``adapters/``.
    """

    def __init__(self, name: str, pythonpath: Path | None = None) -> None:
        self.name = name
        env = None
        if pythonpath is not None:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pythonpath), os.environ.get("PYTHONPATH", "")]))
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "worker.py"), name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=HERE,
            env=env,
        )
        ready = self._read()
        if ready.get("ready") != name:
            raise RuntimeError(f"worker {name} did not start: {ready}")
        info = self.ask({"op": "supports"})
        self.workloads: list[str] = info["workloads"]
        self.version: str = info["version"]

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.name} exited (code {self.process.wait()})")
        return json.loads(line)

    def ask(self, command: dict[str, Any]) -> Any:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        reply = self._read()
        if "error" in reply:
            raise RuntimeError(f"{self.name}: {reply['error']}")
        return reply["ok"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def rotated(items: list[str], by: int) -> list[str]:
    by %= len(items)
    return items[by:] + items[:by]


@dataclass(frozen=True)
class Column:
    """One column of the report: a framework, and for agentnb compared with itself, where it is imported from."""

    framework: str
    label: str
    pythonpath: Path | None = None


def environment(column: Column, base: dict[str, str] | None = None) -> dict[str, str] | None:
    """The environment of a process running ``column``: ``None`` (inherit) unless it imports from a checkout."""
    if column.pythonpath is None:
        return base
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(column.pythonpath), env.get("PYTHONPATH", "")) if p)
    return env


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout.strip()


def export_checkout(ref: str, into: Path) -> str:
    """Write the files of git ``ref`` of this repository under ``into``; return the short commit."""
    commit = git("rev-parse", "--short", f"{ref}^{{commit}}")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # Python before 3.10.12 / 3.11.4: the archive is our own repository's
            tar.extractall(into)
    return commit


def compared_columns(ref: str, scratch: Path) -> list[Column]:
    """agentnb at ``ref`` (a git ref, or a directory holding a checkout) and agentnb from this checkout."""
    here = git("rev-parse", "--short", "HEAD") + ("+changes" if git("status", "--porcelain", "--", "agentnb") else "")
    if Path(ref).is_dir():
        other = Path(ref).resolve()
        label = other.name
    else:
        other = scratch / "agentnb"
        label = export_checkout(ref, other)
        if label != ref:
            label = f"{ref} ({label})"
    columns = [Column("agentnb", f"agentnb {label}", other), Column("agentnb", f"agentnb {here}", REPO)]
    for column in columns:  # each worker must import its own copy, not an installed agentnb
        found = subprocess.run(
            [sys.executable, "-c", "import agentnb; print(agentnb.__file__)"],
            capture_output=True,
            text=True,
            check=True,
            cwd=scratch,
            env=environment(column),
        ).stdout.strip()
        assert column.pythonpath is not None
        if not Path(found).resolve().is_relative_to(column.pythonpath.resolve()):
            raise SystemExit(f"{column.label}: agentnb was imported from {found}, not from {column.pythonpath}")
    return columns


# ---------------------------------------------------------------------------------------------- workloads


def cold_import(columns: dict[str, Column], runs: int) -> dict[str, dict[str, list[float]]]:
    """Workload 1: the import statement timed inside fresh processes (interpreter start-up excluded)."""
    code = (
        "import time, json; w, c = time.perf_counter(), time.process_time()\n"
        "{statement}\n"
        "print(json.dumps([time.perf_counter() - w, time.process_time() - c]))"
    )
    samples: dict[str, dict[str, list[float]]] = {key: {"wall": [], "cpu": []} for key in columns}
    with tempfile.TemporaryDirectory() as cwd:  # not the checkout: agentnb comes from the environment too
        # Bytecode must be cached as it is for any installed package: with PYTHONDONTWRITEBYTECODE set, the
        # editable agentnb would be compiled from source in every process (the peers' wheels were compiled
        # by pip at install time). The warm-up round writes the caches.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONWARNINGS"] = "ignore"
        for round_ in range(runs + 1):  # the first round only warms the file cache and compiles bytecode
            for key in rotated(list(columns), round_):
                column = columns[key]
                out = subprocess.run(
                    [sys.executable, "-c", code.format(statement=IMPORTS[column.framework])],
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=cwd,
                    env=environment(column, env),
                )
                wall, cpu = json.loads(out.stdout.strip().splitlines()[-1])
                if round_:
                    samples[key]["wall"].append(wall * 1000)
                    samples[key]["cpu"].append(cpu * 1000)
    return samples


def peak_rss(column: Column, workload: str, iterations: int) -> float:
    out = subprocess.run(
        [sys.executable, str(HERE / "worker.py"), "--rss", column.framework, workload, str(iterations)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
        env=environment(column),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"]


# ---------------------------------------------------------------------------------------------- report

Row = tuple[str, str, dict[str, list[float]], bool | None]
"""(title, unit, samples by column in that unit, lower_is_better); None: no ratio (the value is a ratio)."""


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: list[float]) -> float:
    """(max - min) / median: how far apart the samples of one cell were."""
    if len(values) < 2:
        return 0.0
    return (max(values) - min(values)) / statistics.median(values)


def fmt(value: float, unit: str) -> str:
    if value != value:  # NaN
        return "n/a"
    if unit in ("ms", "µs/chunk", "µs/turn", "ratio"):
        return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"
    if unit in ("MB",):
        return f"{value:.0f}"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def table(rows: list[Row], columns: dict[str, Column]) -> str:
    """Markdown table of medians, each peer's with its cost relative to the first column's (agentnb)."""
    keys = list(columns)
    header = "| workload | unit | " + " | ".join(columns[key].label for key in keys) + " |"
    lines = [header, "|" + "---|" * (len(keys) + 2)]
    for title, unit, samples, lower_is_better in rows:
        cells = []
        base = median(samples[keys[0]]) if samples.get(keys[0]) else None
        for key in keys:
            if not samples.get(key):
                cells.append("—")
                continue
            value = median(samples[key])
            cell = fmt(value, unit)
            if key != keys[0] and lower_is_better is not None and base and value == value and base == base:
                # Ratio of the peer's cost to agentnb's: 3.0x means the peer takes three times as long (or memory).
                ratio = value / base if lower_is_better else base / value
                cell += f" ({ratio:.1f}x)"
            cells.append(cell)
        lines.append(f"| {title} | {unit} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cost_change(before: float, after: float, lower_is_better: bool | None) -> float:
    """Relative change in cost from ``before`` to ``after``: +0.05 = 5% slower (or a 5% higher growth ratio)."""
    return before / after - 1 if lower_is_better is False else after / before - 1


def row_change(row: Row, columns: dict[str, Column]) -> float:
    """The second agentnb column's cost over the first's, minus one (0 when either has no samples)."""
    before, after = list(columns)
    _, _, samples, lower_is_better = row
    a, b = samples.get(before, []), samples.get(after, [])
    return cost_change(median(a), median(b), lower_is_better) if a and b else 0.0


def compare_table(rows: list[Row], columns: dict[str, Column], limit: float) -> str:
    """Markdown table of two agentnb columns: medians, the change in cost, and how far the samples spread.

    ``paired`` pairs the two columns' samples in the order they were taken (one of each per round, so both
    saw about the same machine load) and gives the middle half of the per-pair changes.
    """
    before, after = list(columns)
    lines = [
        f"| workload | unit | {columns[before].label} | {columns[after].label} | change | limit | "
        "spread before | spread after | paired change, middle half | samples |",
        "|" + "---|" * 10,
    ]
    for title, unit, samples, lower_is_better in rows:
        a, b = samples.get(before, []), samples.get(after, [])
        if not a or not b:
            continue
        change = cost_change(median(a), median(b), lower_is_better)
        pairs = [cost_change(x, y, lower_is_better) for x, y in zip(a, b, strict=False)]
        middle = "—"
        if len(pairs) >= 4:
            q1, _, q3 = statistics.quantiles(pairs, n=4)
            middle = f"{q1:+.1%} to {q3:+.1%}"
        verdict = "over" if change > limit else "ok"
        lines.append(
            f"| {title} | {unit} | {fmt(median(a), unit)} | {fmt(median(b), unit)} | {change:+.1%} | "
            f"{verdict} (≤ {limit:.0%}) | {spread(a):.0%} | {spread(b):.0%} | {middle} | {len(a)}+{len(b)} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed samples per framework and workload")
    parser.add_argument("--seconds", type=float, default=0.4, help="length of one timed sample")
    parser.add_argument("--imports", type=int, default=7, help="fresh processes per framework for workload 1")
    parser.add_argument("--session-rounds", type=int, default=3, help="fresh 200-turn sessions per framework")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS), help="comma-separated subset")
    parser.add_argument("--workloads", default="1,2,3,4,5,6,7,8,9,10,11", help="comma-separated subset of 1-11")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 0.2 s, 3 imports: a smoke test")
    parser.add_argument("--json", type=Path, help="write all samples and medians to this file")
    parser.add_argument("--no-venv", action="store_true", help="use the current interpreter as is")
    parser.add_argument(
        "--compare-agentnb",
        metavar="REF",
        help="agentnb at git REF (or a checkout directory) against this checkout's, instead of the peers",
    )
    parser.add_argument("--limit", type=float, default=5.0, help="with --compare-agentnb: allowed slowdown, %%")
    args = parser.parse_args()
    if not args.no_venv and not args.compare_agentnb and not inside_venv():
        ensure_venv()
    if args.quick:
        args.rounds, args.seconds, args.imports, args.session_rounds = 3, 0.2, 3, 1
    with tempfile.TemporaryDirectory(prefix="agentnb-peers-") as scratch:
        if args.compare_agentnb:
            listed = compared_columns(args.compare_agentnb, Path(scratch))
            columns = {f"agentnb-{i}": column for i, column in enumerate(listed)}
        else:
            columns = {fw: Column(fw, LABELS[fw]) for fw in args.frameworks.split(",") if fw}
            assert next(iter(columns)) == "agentnb", "agentnb comes first: the ratios are relative to it"
        regressed = run(args, columns)
    if regressed:  # only a comparison of two agentnb checkouts judges; a peer run just reports
        raise SystemExit(f"CPU time over the {args.limit:.0f}% limit: {', '.join(regressed)}")


def run(args: argparse.Namespace, columns: dict[str, Column]) -> list[str]:
    """Measure, print the tables; with ``--compare-agentnb``, return the workloads whose CPU time regressed."""
    regressed: list[str] = []
    keys = list(columns)
    chosen = set(args.workloads.split(","))
    started = time.perf_counter()
    info = {"machine": machine(), "load_before": load(), "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(f"machine: {info['machine']}  load average: {info['load_before']}", flush=True)

    results: dict[str, Any] = {"info": info, "columns": {k: c.label for k, c in columns.items()}, "samples": {}}
    cpu_rows: list[Row] = []
    wall_rows: list[Row] = []

    if "1" in chosen:
        print("workload 1: cold import ...", flush=True)
        samples = cold_import(columns, args.imports)
        results["samples"]["import"] = samples
        title = f"1. cold import (median of {args.imports} processes)"
        cpu_rows.append((title, "ms", {key: s["cpu"] for key, s in samples.items()}, True))
        wall_rows.append((title, "ms", {key: s["wall"] for key, s in samples.items()}, True))

    workers: dict[str, Worker] = {}
    if chosen & {"2", "3", "4", "5", "6", "7", "8", "10", "11"}:
        print("starting workers ...", flush=True)
        for key, column in columns.items():
            workers[key] = Worker(column.framework, column.pythonpath)
        info["versions"] = {columns[key].label: w.version for key, w in workers.items()}
        print("versions: " + ", ".join(f"{label} {v}" for label, v in info["versions"].items()), flush=True)

    rate_samples: dict[str, dict[str, dict[str, list[float]]]] = {}
    selected = [w for w in RATE_WORKLOADS if w[0] in chosen]
    if selected:
        print(
            f"workloads {', '.join(w[0] for w in selected)}: {args.rounds} rounds of {args.seconds} s ...", flush=True
        )
    isolated: dict[str, Worker] = {}
    if any(w[1] in ISOLATED for w in selected):
        isolated = {key: Worker(column.framework, column.pythonpath) for key, column in columns.items()}
    for round_ in range(args.rounds):
        for number, workload, _, _ in selected:
            pool = isolated if workload in ISOLATED else workers
            for key in rotated(keys, round_ + int(number)):
                if workload not in pool[key].workloads:
                    continue
                cell = rate_samples.setdefault(workload, {}).setdefault(key, {"cpu": [], "wall": []})
                if len(cell["wall"]) >= 3 and min(cell["wall"]) < 1 / (4 * args.seconds):
                    continue  # one run takes over 4 samples' time (Agent Framework checkpoints): 3 samples do
                sample = pool[key].ask({"op": "measure", "workload": workload, "seconds": args.seconds})
                cell["cpu"].append(sample["n"] / sample["cpu"])
                cell["wall"].append(sample["n"] / sample["wall"])
        print(f"  round {round_ + 1}/{args.rounds} done ({time.perf_counter() - started:.0f} s)", flush=True)
    results["samples"]["rates"] = rate_samples
    for number, workload, title, unit in selected:
        for clock, rows in (("cpu", cpu_rows), ("wall", wall_rows)):
            cells = {key: s[clock] for key, s in rate_samples[workload].items()}
            if unit == "µs/chunk":
                rows.append((title, unit, {key: [1e6 / v / CHUNKS for v in s] for key, s in cells.items()}, True))
            else:
                rows.append((title, unit, cells, False))
            if number == "7":
                sizes = {k: [w.ask({"op": "checkpoint_bytes"})] for k, w in workers.items() if workload in w.workloads}
                rows.append(("7. bytes per checkpoint", "bytes", sizes, True))

    if "8" in chosen:
        print(f"workload 8: {args.session_rounds} sessions of 200 turns per framework ...", flush=True)
        growth: dict[str, dict[str, list[float]]] = {key: {"cpu": [], "wall": [], "mean_us": []} for key in keys}
        for round_ in range(args.session_rounds):
            for key in rotated(keys, round_):
                if "growth" not in workers[key].workloads:
                    continue
                turns = workers[key].ask({"op": "growth", "turns": 200})
                for clock in ("cpu", "wall"):
                    growth[key][clock].append(sum(turns[clock][-10:]) / sum(turns[clock][:10]))
                growth[key]["mean_us"].append(sum(turns["cpu"]) / len(turns["cpu"]) * 1e6)
        results["samples"]["growth"] = growth
        title = "8. 200-turn session: last 10 turns / first 10"
        cpu_rows.append((title, "ratio", {key: g["cpu"] for key, g in growth.items() if g["cpu"]}, None))
        wall_rows.append((title, "ratio", {key: g["wall"] for key, g in growth.items() if g["wall"]}, None))
        title = "8. 200-turn session: CPU time per turn"
        cpu_rows.append((title, "µs/turn", {key: g["mean_us"] for key, g in growth.items() if g["mean_us"]}, True))

    for worker in [*workers.values(), *isolated.values()]:
        worker.close()

    if "9" in chosen:
        print("workload 9: peak RSS in fresh processes ...", flush=True)
        rss: dict[str, dict[str, float]] = {"turn": {}, "chain": {}}
        for key, column in columns.items():
            rss["turn"][key] = peak_rss(column, "turn", 1000)
            if column.framework in ("agentnb", "agent_framework", "langgraph"):
                rss["chain"][key] = peak_rss(column, "chain", 30)
        results["samples"]["rss"] = rss
        turn_mb = {key: [mb] for key, mb in rss["turn"].items()}
        chain_mb = {key: [mb] for key, mb in rss["chain"].items()}
        for rows in (cpu_rows, wall_rows):
            rows.append(("9. peak RSS, 1000 turns (workload 2)", "MB", turn_mb, True))
            rows.append(("9. peak RSS, 30 chain runs (workload 5)", "MB", chain_mb, True))

    def noise(rows: list[Row]) -> float | None:
        spreads = [spread(s) for _, unit, cells, _ in rows if unit != "ratio" for s in cells.values() if len(s) > 1]
        return median(spreads) if spreads else None

    info["load_after"] = load()
    info["seconds"] = round(time.perf_counter() - started)
    info["noise_cpu"] = noise(cpu_rows)
    info["noise_wall"] = noise(wall_rows)
    results["medians"] = {
        clock: [(title, unit, {k: median(s) for k, s in cells.items()}, lower) for title, unit, cells, lower in rows]
        for clock, rows in (("cpu", cpu_rows), ("wall", wall_rows))
    }

    versions = info.get("versions", {})
    print()
    print(
        f"Machine: {info['machine']['cpu']}, {info['machine']['cores']} cores, {info['machine']['memory']}, "
        f"{info['machine']['os']}, Python {info['machine']['python']}"
    )
    print(
        f"Started {info['started']}; load average {info['load_before']} before, {info['load_after']} after; "
        f"run took {info['seconds']} s."
    )
    if versions:
        print("Versions: " + ", ".join(f"{label} {v}" for label, v in versions.items()))
    print()
    if args.compare_agentnb:
        print(
            "Medians by CPU time of each worker process; change = cost after over cost before, minus one "
            "(+ = slower); spread = (max - min) / median of a cell's samples.\n"
        )
        print(compare_table(cpu_rows, columns, args.limit / 100))
        regressed = [row[0] for row in cpu_rows if row_change(row, columns) > args.limit / 100]
        print("\nSame samples by wall-clock time:\n")
        print(compare_table(wall_rows, columns, args.limit / 100))
    else:
        print("Medians by CPU time of each worker process; (Nx) = the peer's cost over agentnb's (higher = slower).\n")
        print(table(cpu_rows, columns))
        print("\nSame samples by wall-clock time:\n")
        print(table(wall_rows, columns))
    if info["noise_cpu"] is not None:
        print(
            f"\nNoise: median spread (max-min)/median of a cell's samples: CPU {info['noise_cpu']:.0%}, "
            f"wall {info['noise_wall']:.0%}."
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
        print(f"wrote {args.json}")
    return regressed


if __name__ == "__main__":
    main()
