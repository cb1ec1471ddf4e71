from __future__ import annotations

import subprocess
import sys

import agentnb

HEAVY = (
    "openai",
    "mcp",
    "pandas",
    "panel",
    "ipywidgets",
    "opentelemetry.sdk",
    "bokeh",
    "IPython",
    "pydantic",
    "tqdm",
    "ray",
)


def test_import_agentnb_stays_light() -> None:
    code = f"import sys, agentnb; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import agentnb pulled in: {out.stdout.strip()}"


def test_public_api_is_sorted_and_resolvable() -> None:
    # Ruff's order (RUF022): CONSTANTS, then Classes, then the rest, each alphabetical.
    assert agentnb.__all__ == sorted(
        agentnb.__all__, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n)
    )
    core = [n for n in agentnb.__all__ if n not in agentnb._LAZY_EXPORTS]
    for name in core:
        assert getattr(agentnb, name) is not None
    try:
        agentnb.does_not_exist  # noqa: B018
    except AttributeError as e:
        assert "does_not_exist" in str(e)
    else:
        raise AssertionError("unknown attributes must raise AttributeError")


def test_py_typed_marker_ships() -> None:
    from importlib.resources import files

    assert files("agentnb").joinpath("py.typed").is_file()


def test_import_agentnb_evals_stays_light() -> None:
    code = f"import sys, agentnb.evals; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import agentnb.evals pulled in: {out.stdout.strip()}"


def test_public_names_are_written_once() -> None:
    # Names are written in the imports of agentnb/__init__.py; the lazy table and __all__ are generated.
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "scripts" / "generate_init.py"
    out = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
