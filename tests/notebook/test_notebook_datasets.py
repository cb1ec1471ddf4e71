"""%agentnb dataset: stored runs become a dataset from a notebook cell, saved in versions (real kernel)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.notebook.kernel_harness import KernelSession, text

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    home = tmp_path_factory.mktemp("datasets-home")
    session = KernelSession(tmp_path_factory.mktemp("datasets"))
    try:
        session.run(f"import os\nos.environ['AGENTNB_HOME'] = {str(home)!r}")
        session.run(
            "%load_ext agentnb\n"
            "from agentnb import Agent\n"
            "from agentnb.evals import run_batch\n"
            "from agentnb.local import FunctionChatClient\n"
            "shout = Agent(FunctionChatClient(lambda m, o: m[-1].text.upper()), name='shout')\n"
            "other = Agent(FunctionChatClient(lambda m, o: 'no'), name='other')"
        )
        yield session
    finally:
        session.close()


def test_the_magic_turns_matching_runs_into_a_saved_dataset(kernel: KernelSession) -> None:
    kernel.run("await run_batch(shout, ['hi', 'bye'], progress=False)\nawait run_batch(other, ['x'], progress=False)")
    out = text(
        kernel.run(
            "first = %agentnb dataset greetings --agent shout --save\n"
            "second = %agentnb dataset greetings --agent shout --last 1 --save\n"
            "print(first.version, sorted((r['input'], r['expected']) for r in first.rows))\n"
            "print(second.version, len(second))"
        )
    )
    assert "1 [('bye', 'BYE'), ('hi', 'HI')]" in out
    assert "2 1" in out
    shown = text(kernel.run("%agentnb dataset everything --status any"))
    assert "Dataset(name='everything', version=None, rows=3)" in shown
    bad = text(kernel.run("%agentnb dataset x --last 0"))
    assert "--last must be >= 1" in bad
