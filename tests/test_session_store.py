"""FileHistoryProvider (append-only JSONL per session) and FileSessionStore (atomic JSON snapshots)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentnb import Agent, AgentSession, Content, FileHistoryProvider, FileSessionStore, Message
from agentnb._session_store import _decode_stem, session_filename
from agentnb.exceptions import SessionCorruptError, SessionError
from agentnb.local import ScriptedChatClient

# -- file names ---------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=200))
def test_any_session_id_becomes_a_portable_reversible_file_name(session_id: str) -> None:
    name = session_filename(session_id, ".json")
    stem = name.removesuffix(".json")
    assert set(stem) <= set("abcdefghijklmnopqrstuvwxyz0123456789-_~")
    assert len(name) <= 130
    assert stem.lower() not in {"con", "prn", "aux", "nul", "com1", "lpt1"}
    decoded = _decode_stem(stem)
    assert decoded in (session_id, None)  # None only for hashed long ids
    if len(session_id.encode("utf-8")) * 3 <= 120:  # short enough to be encoded in full
        assert decoded == session_id


def test_file_names_do_not_collide_on_case_insensitive_file_systems() -> None:
    names = {session_filename(s, ".json") for s in ("abc", "ABC", "Abc", "a/bc", "a\\bc", "a bc", "..", "CON", "con")}
    assert len(names) == 9
    assert len({n.lower() for n in names}) == 9
    long_a, long_b = "x" * 500 + "a", "x" * 500 + "b"
    assert session_filename(long_a, ".json") != session_filename(long_b, ".json")
    with pytest.raises(ValueError, match="non-empty"):
        session_filename("", ".json")


# -- FileHistoryProvider ------------------------------------------------------------------------------------


async def test_history_is_appended_per_session_and_restored(tmp_path: Path) -> None:
    history = FileHistoryProvider(tmp_path)
    client = ScriptedChatClient(["Hi Ada!", "Hello Bob.", "You are Ada."])
    agent = Agent(client, context_providers=[history])
    ada, bob = agent.create_session(session_id="ada"), agent.create_session(session_id="Bob/2")

    await agent.run("I'm Ada.", session=ada)
    await agent.run("I'm Bob.", session=bob)
    response = await agent.run("Who am I?", session=ada)

    assert response.text == "You are Ada."
    assert [m.text for m in client.calls[2]] == ["I'm Ada.", "Hi Ada!", "Who am I?"]  # only Ada's history
    lines = history.path_for("ada").read_text().splitlines()
    assert [Message.from_dict(json.loads(line)).text for line in lines] == [
        "I'm Ada.",
        "Hi Ada!",
        "Who am I?",
        "You are Ada.",
    ]
    assert history.path_for("Bob/2").parent == tmp_path
    assert "Who am I" not in json.dumps(ada.to_dict())  # the messages live in the file, not the session
    # A new provider object (a new process) reads the same history.
    again = await FileHistoryProvider(tmp_path).get_messages("ada", state={})
    assert [m.text for m in again] == ["I'm Ada.", "Hi Ada!", "Who am I?", "You are Ada."]


async def test_history_round_trips_every_content_kind(tmp_path: Path) -> None:
    history = FileHistoryProvider(tmp_path)
    call = Content.from_function_call("c1", "f", {"x": 1})
    messages = [
        Message("user", [Content.from_text("é 😀"), Content.from_data(b"\x00\xff", "image/png")]),
        Message("assistant", [call, Content.from_function_approval_request("c1:r", call)]),
        Message("tool", [Content.from_function_result("c1", result={"a": [1, 2]})]),
        Message("user", [Content.from_function_approval_response("c1:r", True, call, reason="ok")]),
    ]
    await history.save_messages("s", messages[:2], state={})
    await history.save_messages("s", messages[2:], state={})
    assert await history.get_messages("s", state={}) == messages


async def test_a_corrupt_line_is_reported_with_its_number_and_kept(tmp_path: Path) -> None:
    history = FileHistoryProvider(tmp_path)
    await history.save_messages("s", [Message("user", ["one"]), Message("assistant", ["two"])], state={})
    path = history.path_for("s")
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n{not json\n" + lines[1] + "\n")
    before = path.read_bytes()

    with pytest.raises(SessionCorruptError, match=r"line 2 is not a stored message") as info:
        await history.get_messages("s", state={})
    assert info.value.path == str(path)
    assert path.read_bytes() == before

    with pytest.warns(UserWarning, match="line 2"):
        messages = await FileHistoryProvider(tmp_path, skip_corrupt_lines=True).get_messages("s", state={})
    assert [m.text for m in messages] == ["one", "two"]


async def test_a_torn_last_write_is_reported_and_later_appends_stay_readable(tmp_path: Path) -> None:
    history = FileHistoryProvider(tmp_path)
    await history.save_messages("s", [Message("user", ["one"])], state={})
    path = history.path_for("s")
    with path.open("a") as f:
        f.write('{"role": "assistant", "conte')  # a crash in the middle of a write

    with pytest.raises(SessionCorruptError, match="cut short"):
        await history.get_messages("s", state={})

    await history.save_messages("s", [Message("user", ["three"])], state={})
    with pytest.warns(UserWarning):
        messages = await FileHistoryProvider(tmp_path, skip_corrupt_lines=True).get_messages("s", state={})
    assert [m.text for m in messages] == ["one", "three"]  # the new line did not fuse with the torn one


async def test_runs_without_a_session_keep_no_history(tmp_path: Path) -> None:
    agent = Agent(ScriptedChatClient(["a", "b"]), context_providers=[FileHistoryProvider(tmp_path)])
    await agent.run("x")
    await agent.run("y")
    assert list(tmp_path.iterdir()) == []


# -- FileSessionStore ---------------------------------------------------------------------------------------


async def test_sessions_save_load_list_and_delete(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    assert store.list_sessions() == []
    assert store.load("missing") is None
    agent = Agent(ScriptedChatClient(["Hi!", "Bye!"]))
    ids = ["simple", "With Upper/and slash", "ümlaut ✓", "x" * 400]
    for session_id in ids:
        session = agent.create_session(session_id=session_id)
        session.state["notes"] = {"n": 1, "when": b"\x01"}
        store.save(session)
    session = agent.create_session(session_id="chat")
    await agent.run("Hello", session=session)
    store.save(session)

    assert store.list_sessions() == sorted([*ids, "chat"])
    restored = store.load("chat")
    assert restored is not None
    assert restored.session_id == "chat"
    assert [m.text for m in restored.messages] == ["Hello", "Hi!"]
    assert store.load("ümlaut ✓").state["notes"] == {"n": 1, "when": b"\x01"}  # type: ignore[union-attr]
    assert "With Upper/and slash" in store

    await agent.run("Later", session=restored)  # the restored session carries on
    store.save(restored)
    assert [m.text for m in store.load("chat").messages] == ["Hello", "Hi!", "Later", "Bye!"]  # type: ignore[union-attr]

    assert await store.delete("chat") is True
    assert await store.delete("chat") is False
    assert "chat" not in store
    assert not [p for p in (tmp_path / "sessions").iterdir() if p.name.startswith(".")]  # no temp files left


def test_save_replaces_the_snapshot_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = FileSessionStore(tmp_path)
    session = AgentSession(session_id="s", state={"v": 1})
    path = store.save(session)
    good = path.read_bytes()

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    session.state["v"] = 2
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        store.save(session)
    monkeypatch.undo()

    assert path.read_bytes() == good  # the old snapshot is intact
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # and the temporary file is gone
    assert store.load("s").state == {"v": 1}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"{truncated", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        (b'{"some": "other file"}', "not an agentnb session snapshot"),
        (b'{"format": "agentnb.session", "version": 1, "session": {"type": "nope"}}', "Not a saved AgentSession"),
        (
            b'{"format": "agentnb.session", "version": 1, "session": {"type": "agent_session", "session_id": "s",'
            b' "state": {"x": {"__agentnb__": "mystery"}}}}',
            "cannot be restored",
        ),
    ],
)
def test_a_corrupt_snapshot_raises_and_is_never_silently_overwritten(
    tmp_path: Path, content: bytes, match: str
) -> None:
    store = FileSessionStore(tmp_path)
    path = store.path_for("s")
    path.write_bytes(content)

    with pytest.raises(SessionCorruptError, match=match) as info:
        store.load("s")
    assert info.value.path == str(path)
    assert path.read_bytes() == content

    with pytest.raises(SessionCorruptError):
        store.save(AgentSession(session_id="s"))
    assert path.read_bytes() == content

    store.save(AgentSession(session_id="s", state={"fresh": True}), overwrite_corrupt=True)
    assert store.load("s").state == {"fresh": True}  # type: ignore[union-attr]
    [backup] = [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    assert backup.read_bytes() == content
    assert store.list_sessions() == ["s"]


def test_a_snapshot_from_a_newer_version_is_refused_but_not_called_corrupt(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    path = store.path_for("s")
    path.write_text(json.dumps({"format": "agentnb.session", "version": 99, "session": {}}))
    with pytest.raises(SessionError, match="newer agentnb") as info:
        store.load("s")
    assert not isinstance(info.value, SessionCorruptError)


def test_save_rejects_what_is_not_a_session(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="AgentSession"):
        FileSessionStore(tmp_path).save({"session_id": "s"})  # type: ignore[arg-type]


def test_foreign_files_in_the_directory_are_not_listed(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.save(AgentSession(session_id="mine"))
    (tmp_path / "README.json").write_text("{}")
    (tmp_path / ".mine.json.123.tmp").write_text("{}")
    assert store.list_sessions() == ["mine"]


# -- the reference's keyed interface ---------------------------------------------------------------------------


async def test_keyed_get_and_set_store_a_session_under_the_callers_key(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    session = AgentSession(session_id="inner", service_session_id="svc")
    session.state["notes"] = ["first"]
    assert await store.get("tenant/user") is None
    await store.set("tenant/user", session)
    session.state["notes"].append("later")  # the store keeps the snapshot, not the object
    restored = await FileSessionStore(tmp_path).get("tenant/user")
    assert restored is not None and restored is not session
    assert (restored.session_id, restored.service_session_id) == ("inner", "svc")
    assert restored.state["notes"] == ["first"]
    assert await store.delete("tenant/user") and await store.get("tenant/user") is None


async def test_keyed_methods_refuse_empty_or_overlong_keys_and_session_subclasses(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    too_long = "x" * (FileSessionStore.MAX_SESSION_ID_LENGTH + 1)
    for key in ("", too_long):
        with pytest.raises(ValueError, match="session_id"):
            await store.get(key)
        with pytest.raises(ValueError, match="session_id"):
            await store.set(key, AgentSession())

    class Custom(AgentSession):
        pass

    with pytest.raises(TypeError, match="AgentSession instances only"):
        await store.set("custom", Custom())
    store.save(AgentSession(session_id=too_long))  # save/load take ids of any length
    assert store.load(too_long) is not None


# -- snapshot layout, formats, durability --------------------------------------------------------------------


def test_a_snapshot_is_the_sessions_dict_with_a_version_and_the_earlier_layout_still_loads(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    path = store.save(AgentSession(session_id="s", service_session_id="svc", state={"n": 1}))
    data = json.loads(path.read_text())
    assert {k: data[k] for k in ("type", "version", "session_id", "service_session_id", "state")} == {
        "type": "session",
        "version": "1.0",
        "session_id": "s",
        "service_session_id": "svc",
        "state": {"n": 1},
    }
    path.write_text(json.dumps({"format": "agentnb.session", "version": 1, "session": {**data, "state": {"n": 2}}}))
    restored = store.load("s")
    assert restored is not None and restored.state == {"n": 2}


async def test_messagepack_snapshots_and_histories_round_trip(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "sessions", serialization_format="msgpack")
    session = AgentSession(session_id="s", state={"history": [Message("user", ["hello"])], "when": b"\x00"})
    await store.set("key", session)
    (path,) = (tmp_path / "sessions").iterdir()
    assert path.suffix == ".msgpack" and not path.read_bytes().startswith(b"{")
    restored = await store.get("key")
    assert restored is not None and restored.state["history"][0].text == "hello" and restored.state["when"] == b"\x00"

    history = FileHistoryProvider(tmp_path / "history", serialization_format="msgpack")
    await history.save_messages("s", [Message("user", ["one"])])
    await history.save_messages("s", [Message("assistant", ["two"]), Message("user", ["three"])])
    assert [m.text for m in await history.get_messages("s")] == ["one", "two", "three"]
    file = history.path_for("s")
    assert file.suffix == ".msgpack"
    file.write_bytes(file.read_bytes()[:-3])  # a write cut short
    with pytest.raises(SessionCorruptError, match="record 3"):
        await history.get_messages("s")
    with pytest.raises(ValueError, match="only with serialization_format='json'"):
        FileHistoryProvider(tmp_path, serialization_format="msgpack", loads=json.loads)


async def test_state_a_file_cannot_hold_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    with pytest.raises(ValueError, match=r"state\.scores\[1\] must be a finite float"):
        store.save(AgentSession(session_id="s", state={"scores": [1.0, float("nan")]}))

    class Opaque:
        pass

    with pytest.warns(RuntimeWarning, match="leaving it unchanged"), pytest.raises(TypeError, match=r"state\.x"):
        await store.set("s", AgentSession(state={"x": Opaque()}))
    assert list(tmp_path.iterdir()) == []


async def test_the_keyed_get_moves_an_undecodable_snapshot_aside_so_a_retry_starts_over(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    await store.set("k", AgentSession())
    path = store.path_for("k")
    path.write_text("{not json")
    with pytest.raises(SessionCorruptError, match=r"quarantined .* retry") as info:
        await store.get("k")
    assert isinstance(info.value, ValueError)
    assert not path.exists() and Path(info.value.path or "").read_text() == "{not json"
    assert await store.get("k") is None
    with pytest.raises(SessionCorruptError):  # the plain interface reports it and leaves it in place
        path.write_text("{not json")
        store.load("k")
    assert path.exists()


async def test_the_keyed_methods_refuse_a_snapshot_file_that_is_a_link(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    (tmp_path / "other.json").write_text("{}")
    store.path_for("k").symlink_to(tmp_path / "other.json")
    for call in (store.get("k"), store.set("k", AgentSession()), store.delete("k")):
        with pytest.raises(ValueError, match="escaped storage directory"):
            await call


async def test_deprecated_custom_codecs_write_one_line_per_message(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="deprecated"):
        pretty = FileHistoryProvider(tmp_path, dumps=lambda value: json.dumps(value, indent=2))
    with pytest.raises(ValueError, match="single-line JSON"):
        await pretty.save_messages("s", [Message("user", ["hi"])])
    assert not pretty.path_for("s").exists()
    history = FileHistoryProvider(tmp_path / "made")
    assert history.storage_path.is_dir()  # made when the provider is
    assert history.loads(history.dumps({"text": "héllo"})) == {"text": "héllo"}
