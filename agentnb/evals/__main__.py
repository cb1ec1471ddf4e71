"""The evaluation gate from a shell, for CI: run a dataset against the current code, or check a stored run.

    python -m agentnb.evals run pkg.agents:make_agent data/geo.jsonl --name geo-$SHA \\
        --scorer exact_match --scorers pkg.evals:SCORERS --min exact_match=0.9 --baseline geo-main
    python -m agentnb.evals gate geo-$SHA --baseline geo-main --min exact_match=0.9

``run`` evaluates the target (an import string; point it at an offline or recorded model so CI needs no
network) over the dataset (a ``.jsonl`` / ``.csv`` file, or ``dataset:NAME`` / ``dataset:NAME@VERSION`` for a
dataset saved in the run store), stores the experiment, then gates it like ``gate``. Both print a readable
report and exit with status 1 when the gate fails (2 for a usage error).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Any, cast

__all__ = ["main"]

#: Scorers a command line can name: factories that need no arguments.
_BUILT_IN = ("exact_match", "contains", "json_valid")


def _thresholds(values: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for value in values:
        column, sep, number = value.rpartition("=")
        if not sep or not column:
            raise ValueError(f"--min takes SCORE=VALUE, got {value!r}")
        try:
            out[column] = float(number)
        except ValueError:
            raise ValueError(f"--min {value!r}: {number!r} is not a number") from None
    return out


def _scorers(names: Sequence[str], imports: Sequence[str]) -> list[Any]:
    from . import scorers
    from ._targets import import_target

    out: list[Any] = []
    for name in names:
        if name not in _BUILT_IN:
            raise ValueError(
                f"--scorer {name!r} is not one of {list(_BUILT_IN)}; pass others with --scorers pkg.mod:NAME"
            )
        out.append(getattr(scorers, name)())
    for spec in imports:
        found: Any = import_target(spec)
        code = getattr(found, "__code__", None)
        if callable(found) and not isinstance(found, scorers.Scorer) and code is not None and code.co_argcount == 0:
            found = found()  # a factory of scorers
        out.extend(cast("list[Any]", found) if isinstance(found, (list, tuple)) else [found])
    if not out:
        raise ValueError("Give at least one scorer: --scorer NAME or --scorers pkg.mod:SCORERS")
    return out


def _dataset(spec: str, store: Any) -> Any:
    if spec.startswith("dataset:"):
        from ._datasets import load_dataset

        name, _, version = spec.removeprefix("dataset:").partition("@")
        return load_dataset(name, version=int(version) if version else None, store=store).rows
    return spec


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agentnb.evals", description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def gate_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--baseline", help="an experiment no case may get worse than")
        p.add_argument("--min", action="append", default=[], metavar="SCORE=VALUE", help="lowest passing mean")
        p.add_argument("--max-regressions", type=int, default=0, help="cases allowed to get worse (default 0)")
        p.add_argument("--tolerance", type=float, default=0.0, help="score drop that does not count as worse")
        p.add_argument("--max-errors", type=int, default=0, help="cases allowed to fail to run (default 0)")
        p.add_argument("--store", help="run store URL or path (default: AGENTNB_STORE_URL or ./.agentnb)")

    run = commands.add_parser("run", help="evaluate a target over a dataset, then gate the result")
    run.add_argument("target", help="import string of the agent, workflow or factory: pkg.module:name")
    run.add_argument("dataset", help=".jsonl / .csv file, or dataset:NAME[@VERSION] from the run store")
    run.add_argument("--name", required=True, help="the experiment's name (e.g. with the commit)")
    run.add_argument("--scorer", action="append", default=[], choices=_BUILT_IN, help="a built-in scorer")
    run.add_argument("--scorers", action="append", default=[], metavar="PKG.MOD:NAME", help="scorers by import")
    run.add_argument("--concurrency", type=int, default=16)
    run.add_argument("--fresh", action="store_true", help="do not resume an experiment of the same name")
    gate_options(run)
    check = commands.add_parser("gate", help="gate a stored experiment")
    check.add_argument("experiment", help="the stored experiment to check")
    gate_options(check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    from ._gate import gate
    from ._run import evaluate, resolve_store

    store = resolve_store(args.store)
    name = args.experiment if args.command == "gate" else args.name
    try:
        thresholds = _thresholds(args.min)
        checks = _scorers(args.scorer, args.scorers) if args.command == "run" else []
    except ValueError as e:
        print(f"python -m agentnb.evals: {e}", file=sys.stderr)
        return 2
    if args.command == "run":
        experiment = asyncio.run(
            evaluate(
                args.target,
                _dataset(args.dataset, store),
                checks,
                name=args.name,
                concurrency=args.concurrency,
                resume=not args.fresh,
                progress=False,
                store=store,
            )
        )
        name = experiment.name
    try:
        report = gate(
            name,
            baseline=args.baseline,
            thresholds=thresholds,
            max_regressions=args.max_regressions,
            tolerance=args.tolerance,
            max_errors=args.max_errors,
            store=store,
        )
    except KeyError as e:
        print(e.args[0] if e.args else e, file=sys.stderr)
        return 2
    sys.stdout.write(report.text())
    return 0 if report.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
