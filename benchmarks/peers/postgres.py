"""Workload 7 on PostgreSQL: agentnb's run store next to LangGraph's ``AsyncPostgresSaver``, same server.

Run: ``python benchmarks/peers/postgres.py [--runs N]``. The 100-step chain of ``benchmarks/peers``
(``adapters/agentnb.py`` and ``adapters/langgraph.py``, unchanged), checkpointing after every step, with
agentnb's ``RunStoreCheckpointStorage`` on a PostgreSQL URL and LangGraph's ``langgraph-checkpoint-postgres``
saver on the same throwaway loopback server (one schema each). Runs alternate between the two, and the
table shows median wall time per run: the server is another process, so CPU time of this one would leave
its work out.

The peers' virtual environment (``benchmarks/peers/.venv`` or ``$AGENTNB_PEERS_VENV``) gets LangGraph's
Postgres saver on first use; agentnb never depends on it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VENV = Path(os.environ.get("AGENTNB_PEERS_VENV", HERE / ".venv"))
NEEDS = ("langgraph==1.2.22", "langgraph-checkpoint-postgres==3.2.0", "psycopg[binary]>=3.2", "psycopg-pool>=3.2")


def ensure_venv() -> None:
    python = VENV / "bin" / "python"
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    if not python.exists():
        print(f"creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    probe = subprocess.run([str(python), "-c", "import langgraph.checkpoint.postgres, agentnb"], capture_output=True)
    if probe.returncode != 0:
        print("installing " + ", ".join(NEEDS) + " and agentnb (editable) ...", flush=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *NEEDS, "-e", str(REPO)],
            check=True,
        )
    os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


async def measure(runs: int, agentnb_url: str, langgraph_url: str) -> dict[str, list[float]]:
    from adapters import CHAIN_RESULT, WIDTH
    from adapters import agentnb as anb
    from adapters import langgraph as lg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from agentnb.store import open_store
    from agentnb.workflows import RunStoreCheckpointStorage

    store = open_store(agentnb_url)
    ours = anb._chain(RunStoreCheckpointStorage(store))  # pyright: ignore[reportArgumentType]
    async with AsyncPostgresSaver.from_conn_string(langgraph_url) as saver:
        await saver.setup()
        theirs = lg._chain(saver)  # pyright: ignore[reportArgumentType]

        async def run_ours() -> None:
            assert (await ours.run(0)).get_outputs()[0] == CHAIN_RESULT

        async def run_theirs() -> None:
            config = {**lg.LIMIT, "configurable": {"thread_id": uuid.uuid4().hex}}
            assert (await theirs.ainvoke({"n": 0}, config))["out"] == CHAIN_RESULT

        for fn in (run_ours, run_theirs):  # warm up: imports, prepared statements, pools
            for _ in range(2):
                await fn()
        times: dict[str, list[float]] = {"agentnb": [], "LangGraph": []}
        for i in range(runs):
            order = [("agentnb", run_ours), ("LangGraph", run_theirs)]
            for name, fn in order if i % 2 == 0 else reversed(order):
                started = time.perf_counter()
                await fn()
                times[name].append((time.perf_counter() - started) * 1000)
        count = await (await saver.conn.execute("SELECT COUNT(*) AS n FROM checkpoints")).fetchone()  # type: ignore[union-attr]
    ours_count = len(store.list_checkpoints())
    store.close()
    print(f"checkpoints stored: agentnb {ours_count}, LangGraph {count['n']} (chain of {WIDTH})")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    ensure_venv()
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(REPO))
    from tests.store.pg_server import running_postgres

    with running_postgres() as server:
        times = asyncio.run(
            measure(args.runs, server.url(schema=server.fresh_schema()), server.url(schema=server.fresh_schema()))
        )
    print("\nWorkload 7 on PostgreSQL (loopback, default settings): 100-step chain, checkpoint after every step")
    print(f"{'framework':<12}{'median ms/run':>16}{'ms/checkpoint':>16}{'runs/s':>10}")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"{name:<12}{median:>16.1f}{median / 100:>16.2f}{1000 / median:>10.2f}")


if __name__ == "__main__":
    main()
