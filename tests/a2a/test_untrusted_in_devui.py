"""The DevUI chat honours a remote A2A agent's ``untrusted`` mark: its text is shown escaped and plain, under a
warning that names the remote agent; a local agent's Markdown still renders."""

from __future__ import annotations

import pytest

from agentnb import Agent, Message
from agentnb.a2a import A2AAgent, A2AServer
from agentnb.devui import Catalog
from agentnb.devui._chat import ChatView
from agentnb.local import ScriptedChatClient
from agentnb.store import RunStore

HOSTILE = "<script>alert(1)</script> see [the docs](https://example.com/x) ![pixel](https://example.com/p.png)"


def _transcript(view: ChatView) -> str:
    import panel as pn

    assert view._current is not None  # pyright: ignore[reportPrivateUsage]
    return "\n".join(str(p.object) for p in view._current.transcript.select(pn.pane.HTML))  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("stream", [True, False])
async def test_remote_output_is_plain_escaped_text_under_a_warning(stream: bool) -> None:
    served = Agent(ScriptedChatClient([HOSTILE, HOSTILE]), name="Evil")
    async with A2AServer(served, stream=stream) as server, A2AAgent(url=server.url, name="Remote") as remote:
        view = ChatView(Catalog().add(remote), store=RunStore(":memory:"))
        await view.send("hi")
        html = _transcript(view)
    assert "untrusted · from remote agent Remote" in html
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<a " not in html  # no link from the remote text
    assert "<img" not in html  # and no image it could use to call home
    assert "[the docs](https://example.com/x)" in html  # the text itself is all there, as text


def test_a_stored_remote_message_shown_again_is_still_marked() -> None:
    """A session reopened from the store rebuilds its transcript from the messages, flag included."""
    view = ChatView(Catalog().add(Agent(ScriptedChatClient([]), name="Local")), store=RunStore(":memory:"))
    session = view._require_view()  # pyright: ignore[reportPrivateUsage]
    marked = Message("assistant", [HOSTILE], author_name="Evil", additional_properties={"untrusted": True})
    view._append_message(session, marked)  # pyright: ignore[reportPrivateUsage]
    html = _transcript(view)
    assert "untrusted · from remote agent Evil" in html
    assert "<script>" not in html and "<a " not in html and "<img" not in html


async def test_local_markdown_still_renders() -> None:
    local = Agent(ScriptedChatClient(["see [the docs](https://example.com/x)"]), name="Local")
    view = ChatView(Catalog().add(local), store=RunStore(":memory:"))
    await view.send("hi")
    html = _transcript(view)
    assert "untrusted" not in html
    assert "<a " in html and "https://example.com/x" in html
