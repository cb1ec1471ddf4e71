"""agentnb side by side with Agent Framework, LangGraph, Pydantic AI and the OpenAI Agents SDK.

Run from anywhere (Python 3.10+)::

    python benchmarks/peers/run.py                 # full run, about 10 minutes on 2 busy cores
    python benchmarks/peers/run.py --quick         # fewer rounds, shorter samples (a smoke test)
    python benchmarks/peers/run.py --json out.json # also write every sample

The first run creates a virtual environment (``benchmarks/peers/.venv``, or ``$AGENTNB_PEERS_VENV``) with
the pinned peer frameworks from PyPI and agentnb installed from this checkout (editable), then re-runs
itself inside it. The peers live only there: agentnb never depends on them.

Every framework runs in its own worker process (``worker.py``) on an instant in-process fake model written
with that framework's own model extension API (``adapters/``). The driver alternates between the workers,
sample by sample and in a rotating order, so drifting load on the machine hits every framework alike, and
reports medians. Rates use CPU time of the worker process (``time.process_time``, all threads) because wall
time on a shared machine also counts other processes; wall-time medians are printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VENV = Path(os.environ.get("AGENTNB_PEERS_VENV", HERE / ".venv"))
PEERS = ("agent-framework-core==1.23.0", "langgraph==1.2.22", "pydantic-ai-slim==2.68.0", "openai-agents==0.24.0")

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
)


# ---------------------------------------------------------------------------------------------- environment


def venv_python() -> Path:
    return VENV / "bin" / "python" if os.name != "nt" else VENV / "Scripts" / "python.exe"


def inside_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def ensure_venv() -> None:
    """Create the peers' environment if needed and re-run this script inside it."""
    python = venv_python()
    stamp = VENV / "agentnb-peers.txt"
    wanted = "\n".join([*PEERS, f"-e {REPO}"])
    if not python.exists():
        print(f"creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    if not stamp.exists() or stamp.read_text() != wanted:
        print("installing " + ", ".join(PEERS) + " and agentnb (editable) ...", flush=True)
        started = time.perf_counter()
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PEERS, "-e", str(REPO)],
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
    """A framework's worker process, spoken to one JSON line at a time."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "worker.py"), name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=HERE,
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


# ---------------------------------------------------------------------------------------------- workloads


def cold_import(frameworks: list[str], runs: int) -> dict[str, dict[str, list[float]]]:
    """Workload 1: the import statement timed inside fresh processes (interpreter start-up excluded)."""
    code = (
        "import time, json; w, c = time.perf_counter(), time.process_time()\n"
        "{statement}\n"
        "print(json.dumps([time.perf_counter() - w, time.process_time() - c]))"
    )
    samples: dict[str, dict[str, list[float]]] = {fw: {"wall": [], "cpu": []} for fw in frameworks}
    with tempfile.TemporaryDirectory() as cwd:  # not the checkout: agentnb comes from the environment too
        # Bytecode must be cached as it is for any installed package: with PYTHONDONTWRITEBYTECODE set, the
        # editable agentnb would be compiled from source in every process (the peers' wheels were compiled
        # by pip at install time). The warm-up round writes the caches.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONWARNINGS"] = "ignore"
        for round_ in range(runs + 1):  # the first round only warms the file cache and compiles bytecode
            for fw in rotated(list(frameworks), round_):
                out = subprocess.run(
                    [sys.executable, "-c", code.format(statement=IMPORTS[fw])],
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=cwd,
                    env=env,
                )
                wall, cpu = json.loads(out.stdout.strip().splitlines()[-1])
                if round_:
                    samples[fw]["wall"].append(wall * 1000)
                    samples[fw]["cpu"].append(cpu * 1000)
    return samples


def peak_rss(name: str, workload: str, iterations: int) -> float:
    out = subprocess.run(
        [sys.executable, str(HERE / "worker.py"), "--rss", name, workload, str(iterations)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"]


# ---------------------------------------------------------------------------------------------- report


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
    if unit in ("ms", "µs/chunk", "ratio"):
        return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"
    if unit in ("MB",):
        return f"{value:.0f}"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def table(rows: list[tuple[str, str, dict[str, float], bool | None]], frameworks: list[str]) -> str:
    """Markdown table. ``lower_is_better`` None means no ratio (the value is already a ratio)."""
    header = "| workload | unit | " + " | ".join(LABELS[fw] for fw in frameworks) + " |"
    lines = [header, "|" + "---|" * (len(frameworks) + 2)]
    for title, unit, values, lower_is_better in rows:
        cells = []
        base = values.get("agentnb")
        for fw in frameworks:
            value = values.get(fw)
            if value is None:
                cells.append("—")
                continue
            cell = fmt(value, unit)
            if fw != "agentnb" and lower_is_better is not None and base and value == value and base == base:
                # Ratio of the peer's cost to agentnb's: 3.0x means the peer takes three times as long (or memory).
                ratio = value / base if lower_is_better else base / value
                cell += f" ({ratio:.1f}x)"
            cells.append(cell)
        lines.append(f"| {title} | {unit} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed samples per framework and workload")
    parser.add_argument("--seconds", type=float, default=0.4, help="length of one timed sample")
    parser.add_argument("--imports", type=int, default=7, help="fresh processes per framework for workload 1")
    parser.add_argument("--session-rounds", type=int, default=3, help="fresh 200-turn sessions per framework")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS), help="comma-separated subset")
    parser.add_argument("--workloads", default="1,2,3,4,5,6,7,8,9", help="comma-separated subset of 1-9")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 0.2 s, 3 imports: a smoke test")
    parser.add_argument("--json", type=Path, help="write all samples and medians to this file")
    parser.add_argument("--no-venv", action="store_true", help="use the current interpreter as is")
    args = parser.parse_args()
    if not args.no_venv and not inside_venv():
        ensure_venv()
    if args.quick:
        args.rounds, args.seconds, args.imports, args.session_rounds = 3, 0.2, 3, 1
    frameworks = [fw for fw in args.frameworks.split(",") if fw]
    assert frameworks[0] == "agentnb", "agentnb comes first: the ratios are relative to it"
    chosen = set(args.workloads.split(","))
    started = time.perf_counter()
    info = {"machine": machine(), "load_before": load(), "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(f"machine: {info['machine']}  load average: {info['load_before']}", flush=True)

    results: dict[str, Any] = {"info": info, "samples": {}, "medians": {}}
    cpu_rows: list[tuple[str, str, dict[str, float], bool | None]] = []
    wall_rows: list[tuple[str, str, dict[str, float], bool | None]] = []
    spreads: dict[str, list[float]] = {"cpu": [], "wall": []}

    if "1" in chosen:
        print("workload 1: cold import ...", flush=True)
        samples = cold_import(frameworks, args.imports)
        results["samples"]["import"] = samples
        title = f"1. cold import (median of {args.imports} processes)"
        cpu_rows.append((title, "ms", {fw: median(s["cpu"]) for fw, s in samples.items()}, True))
        wall_rows.append((title, "ms", {fw: median(s["wall"]) for fw, s in samples.items()}, True))
        for s in samples.values():
            spreads["cpu"].append(spread(s["cpu"]))
            spreads["wall"].append(spread(s["wall"]))

    workers: dict[str, Worker] = {}
    needs_workers = chosen & {"2", "3", "4", "5", "6", "7", "8"}
    if needs_workers:
        print("starting workers ...", flush=True)
        for fw in frameworks:
            workers[fw] = Worker(fw)
        info["versions"] = {fw: w.version for fw, w in workers.items()}
        print("versions: " + ", ".join(f"{LABELS[fw]} {v}" for fw, v in info["versions"].items()), flush=True)

    rate_samples: dict[str, dict[str, dict[str, list[float]]]] = {}
    selected = [w for w in RATE_WORKLOADS if w[0] in chosen]
    if selected:
        print(
            f"workloads {', '.join(w[0] for w in selected)}: {args.rounds} rounds of {args.seconds} s ...", flush=True
        )
    for round_ in range(args.rounds):
        for key, workload, _, _ in selected:
            for fw in rotated(frameworks, round_ + int(key)):
                if workload not in workers[fw].workloads:
                    continue
                cell = rate_samples.setdefault(workload, {}).setdefault(fw, {"cpu": [], "wall": []})
                if len(cell["wall"]) >= 3 and min(cell["wall"]) < 1 / (4 * args.seconds):
                    continue  # one run takes over 4 samples' time (Agent Framework checkpoints): 3 samples do
                sample = workers[fw].ask({"op": "measure", "workload": workload, "seconds": args.seconds})
                cell["cpu"].append(sample["n"] / sample["cpu"])
                cell["wall"].append(sample["n"] / sample["wall"])
        print(f"  round {round_ + 1}/{args.rounds} done ({time.perf_counter() - started:.0f} s)", flush=True)
    results["samples"]["rates"] = rate_samples
    for key, workload, title, unit in selected:
        for clock, rows in (("cpu", cpu_rows), ("wall", wall_rows)):
            values = {fw: median(s[clock]) for fw, s in rate_samples[workload].items()}
            for s in rate_samples[workload].values():
                spreads[clock].append(spread(s[clock]))
            if unit == "µs/chunk":
                rows.append((title, unit, {fw: 1e6 / v / CHUNKS for fw, v in values.items()}, True))
            else:
                rows.append((title, unit, values, False))
            if key == "7":
                sizes = {fw: w.ask({"op": "checkpoint_bytes"}) for fw, w in workers.items() if workload in w.workloads}
                rows.append(("7. bytes per checkpoint", "bytes", sizes, True))

    if "8" in chosen:
        print(f"workload 8: {args.session_rounds} sessions of 200 turns per framework ...", flush=True)
        growth: dict[str, dict[str, list[float]]] = {fw: {"cpu": [], "wall": [], "first_us": []} for fw in frameworks}
        for round_ in range(args.session_rounds):
            for fw in rotated(frameworks, round_):
                if "growth" not in workers[fw].workloads:
                    continue
                turns = workers[fw].ask({"op": "growth", "turns": 200})
                for clock in ("cpu", "wall"):
                    growth[fw][clock].append(sum(turns[clock][-10:]) / sum(turns[clock][:10]))
                growth[fw]["first_us"].append(sum(turns["cpu"][:10]) / 10 * 1e6)
        results["samples"]["growth"] = growth
        title = "8. 200-turn session: last 10 turns / first 10"
        cpu_rows.append((title, "ratio", {fw: median(g["cpu"]) for fw, g in growth.items() if g["cpu"]}, None))
        wall_rows.append((title, "ratio", {fw: median(g["wall"]) for fw, g in growth.items() if g["wall"]}, None))

    for worker in workers.values():
        worker.close()

    if "9" in chosen:
        print("workload 9: peak RSS in fresh processes ...", flush=True)
        rss: dict[str, dict[str, float]] = {"turn": {}, "chain": {}}
        for fw in frameworks:
            rss["turn"][fw] = peak_rss(fw, "turn", 1000)
            if fw in ("agentnb", "agent_framework", "langgraph"):
                rss["chain"][fw] = peak_rss(fw, "chain", 30)
        results["samples"]["rss"] = rss
        for rows in (cpu_rows, wall_rows):
            rows.append(("9. peak RSS, 1000 turns (workload 2)", "MB", rss["turn"], True))
            rows.append(("9. peak RSS, 30 chain runs (workload 5)", "MB", rss["chain"], True))

    info["load_after"] = load()
    info["seconds"] = round(time.perf_counter() - started)
    info["noise_cpu"] = median(spreads["cpu"]) if spreads["cpu"] else None
    info["noise_wall"] = median(spreads["wall"]) if spreads["wall"] else None
    results["medians"] = {"cpu": cpu_rows, "wall": wall_rows}

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
        print("Versions: " + ", ".join(f"{LABELS[fw]} {v}" for fw, v in versions.items()))
    print()
    print("Medians by CPU time of each worker process; (Nx) = the peer's cost over agentnb's (higher = slower).\n")
    print(table(cpu_rows, frameworks))
    print("\nSame samples by wall-clock time:\n")
    print(table(wall_rows, frameworks))
    if info["noise_cpu"] is not None:
        print(
            f"\nNoise: median spread (max-min)/median of a cell's samples: CPU {info['noise_cpu']:.0%}, "
            f"wall {info['noise_wall']:.0%}."
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
