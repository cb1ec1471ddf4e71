# Copyright (c) Microsoft. All rights reserved.

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentnb import Agent, AgentFileStore, AgentSession, Content, ExperimentalFeature, FileAccessProvider, FileSearchMatch, FileSearchResult, FileStoreEntry, FileSystemAgentFileStore, FunctionTool, InMemoryAgentFileStore, Message, SupportsChatGetResponse
from agentnb import DEFAULT_FILE_ACCESS_INSTRUCTIONS, DEFAULT_FILE_ACCESS_SOURCE_ID

from .conftest import create_junction_or_skip


async def _list_files(store: AgentFileStore, directory: str = "") -> list[str]:
    """Return only the file names from a combined ``store.list_children`` call."""
    return [entry.name for entry in await store.list_children(directory) if entry.type == FileStoreEntry.FILE]


async def _list_dirs(store: AgentFileStore, directory: str = "") -> list[str]:
    """Return only the subdirectory names from a combined ``store.list_children`` call."""
    return [entry.name for entry in await store.list_children(directory) if entry.type == FileStoreEntry.DIRECTORY]


def _tool_by_name(tools: list[object], name: str) -> FunctionTool:
    """Return the tool with the requested name from a prepared tool list."""
    for tool in tools:
        if isinstance(tool, FunctionTool) and tool.name == name:
            return tool
    raise AssertionError(f"Tool {name!r} was not found.")


def _text(content: Content) -> str:
    assert content.text is not None
    return content.text






def test_file_search_match_round_trips() -> None:
    """File search match values should serialize and validate cleanly."""
    raw_match = {"line_number": 3, "line": "error: boom"}

    match = FileSearchMatch.from_dict(raw_match)
    assert match == FileSearchMatch(line_number=3, line="error: boom")
    assert match.to_dict() == raw_match
    assert "FileSearchMatch(" in repr(match)

    with pytest.raises(ValueError, match="positive integer"):
        FileSearchMatch(line_number=0, line="oops")
    with pytest.raises(ValueError, match="must be an integer"):
        FileSearchMatch.from_dict({"line_number": "1", "line": "oops"})
    with pytest.raises(ValueError, match="must be a string"):
        FileSearchMatch.from_dict({"line_number": 1, "line": 42})


def test_file_search_result_round_trips() -> None:
    """File search result values should serialize the matching-line list correctly."""
    raw_result = {
        "file_name": "notes.md",
        "snippet": "hello error world",
        "matching_lines": [{"line_number": 2, "line": "error one"}],
    }

    result = FileSearchResult.from_dict(raw_result)
    assert result.file_name == "notes.md"
    assert result.snippet == "hello error world"
    assert result.matching_lines == [FileSearchMatch(line_number=2, line="error one")]
    assert result.to_dict() == raw_result
    assert json.loads(result.to_json()) == raw_result

    with pytest.raises(ValueError, match="matching_lines must be a list"):
        FileSearchResult.from_dict({"file_name": "x", "snippet": "", "matching_lines": {}})

    with pytest.raises(ValueError, match="elements must be mappings"):
        FileSearchResult.from_dict({"file_name": "x", "snippet": "", "matching_lines": ["not-a-dict"]})


async def test_in_memory_store_round_trips_files() -> None:
    """The in-memory store should support write/read/exists/delete/list operations."""
    store = InMemoryAgentFileStore()

    await store.write("a.txt", "alpha")
    await store.write("sub/b.txt", "beta")

    assert await store.file_exists("a.txt")
    assert not await store.file_exists("missing.txt")
    assert await store.read("a.txt") == "alpha"
    assert await store.read("missing.txt") is None

    assert sorted(await _list_files(store)) == ["a.txt"]  # subdirs are not direct children
    assert sorted(await _list_files(store, "sub")) == ["b.txt"]

    assert await store.delete("a.txt") is True
    assert await store.delete("a.txt") is False
    assert sorted(await _list_files(store)) == []


async def test_in_memory_store_search_returns_matches_with_snippets() -> None:
    """The in-memory store should search file content case-insensitively and respect glob filters."""
    store = InMemoryAgentFileStore()
    await store.write("a.md", "line one\nThis line has ERROR inside\nline three\r")
    await store.write("b.md", "no match here")
    await store.write("notes.txt", "ERROR but wrong extension")

    results = await store.search("", "error", "*.md")
    assert [result.file_name for result in results] == ["a.md"]
    matching_lines = results[0].matching_lines
    assert matching_lines == [FileSearchMatch(line_number=2, line="This line has ERROR inside")]
    assert "ERROR" in results[0].snippet

    # No glob -> searches every file.
    results_all = await store.search("", "error")
    assert {result.file_name for result in results_all} == {"a.md", "notes.txt"}


async def test_in_memory_store_search_is_recursive_with_root_relative_names() -> None:
    """Recursive search should find files at any depth and return root-relative names."""
    store = InMemoryAgentFileStore()
    await store.write("top.md", "ERROR at top")
    await store.write("reports/q1.md", "ERROR in q1")
    await store.write("reports/2024/q2.md", "ERROR in q2")
    await store.write("reports/2024/data.txt", "ERROR wrong extension")

    # Non-recursive (default) only sees the direct child.
    direct = await store.search("", "error")
    assert {result.file_name for result in direct} == {"top.md"}

    # Recursive sees every descendant, with store-root-relative file names.
    recursive = await store.search("", "error", recursive=True)
    assert {result.file_name for result in recursive} == {
        "top.md",
        "reports/q1.md",
        "reports/2024/q2.md",
        "reports/2024/data.txt",
    }

    # Subtree scoping via the glob (``*`` crosses ``/`` with fnmatch).
    scoped = await store.search("", "error", "reports/*", recursive=True)
    assert {result.file_name for result in scoped} == {
        "reports/q1.md",
        "reports/2024/q2.md",
        "reports/2024/data.txt",
    }

    # Extension glob matches markdown at any depth but not other extensions.
    markdown = await store.search("", "error", "*.md", recursive=True)
    assert {result.file_name for result in markdown} == {
        "top.md",
        "reports/q1.md",
        "reports/2024/q2.md",
    }


async def test_in_memory_store_list_directories() -> None:
    """``list_directories`` should return direct child subdirectories only, preserving casing."""
    store = InMemoryAgentFileStore()
    await store.write("top.md", "x")
    await store.write("Reports/q1.md", "x")
    await store.write("Reports/2024/q2.md", "x")
    await store.write("data/raw.csv", "x")

    assert sorted(await _list_dirs(store)) == ["Reports", "data"]
    assert sorted(await _list_dirs(store, "Reports")) == ["2024"]
    # A directory with no subdirectories returns an empty list.
    assert await _list_dirs(store, "data") == []
    # A missing directory returns an empty list.
    assert await _list_dirs(store, "missing") == []


async def test_in_memory_store_list_directories_rejects_traversal() -> None:
    """``list_directories`` must reject traversal inputs the way ``list_files`` does."""
    store = InMemoryAgentFileStore()
    await store.write("reports/q1.md", "x")
    for bad in ("../escape", "/abs/path", ".."):
        with pytest.raises(ValueError):
            await _list_dirs(store, bad)


async def test_in_memory_store_search_rejects_invalid_and_oversize_regex() -> None:
    """``search`` should surface clean errors for bad regex input."""
    store = InMemoryAgentFileStore()
    await store.write("a.md", "hello")

    with pytest.raises(re.error):
        await store.search("", "[unclosed")

    with pytest.raises(ValueError, match="too long"):
        await store.search("", "a" * 257)


async def test_in_memory_store_normalizes_paths() -> None:
    """Path normalization should reject traversal in the in-memory store too."""
    store = InMemoryAgentFileStore()
    for bad in ("../escape.txt", "/abs/path.txt", "."):
        with pytest.raises(ValueError):
            await store.write(bad, "boom")


async def test_filesystem_store_round_trips_files(tmp_path: Path) -> None:
    """The filesystem store should round-trip files on disk and create parents on write."""
    store = FileSystemAgentFileStore(tmp_path)

    await store.write("nested/a.txt", "alpha")
    assert (tmp_path / "nested" / "a.txt").read_text(encoding="utf-8") == "alpha"

    assert await store.read("nested/a.txt") == "alpha"
    assert await store.read("missing.txt") is None
    assert await store.file_exists("nested/a.txt")
    assert not await store.file_exists("missing.txt")
    assert sorted(await _list_files(store, "nested")) == ["a.txt"]
    assert sorted(await _list_files(store)) == []  # root only contains the directory

    assert await store.delete("nested/a.txt") is True
    assert await store.delete("nested/a.txt") is False


async def test_filesystem_store_rejects_traversal_and_rooted_paths(tmp_path: Path) -> None:
    """The filesystem store should refuse paths that escape the configured root."""
    store = FileSystemAgentFileStore(tmp_path)

    for bad in ("../escape.txt", "/etc/passwd", "C:/Windows/System32/notepad.exe", ".", ".."):
        with pytest.raises(ValueError):
            await store.write(bad, "boom")


async def test_filesystem_store_rejects_symlinks_into_root(tmp_path: Path) -> None:
    """The filesystem store should refuse to read through a symlink target."""
    target = tmp_path / "outside.txt"
    target.write_text("outside", encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    link = root / "link.txt"
    try:
        link.symlink_to(target)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"Symbolic links are not supported in this environment: {exc!r}")

    store = FileSystemAgentFileStore(root)
    with pytest.raises(ValueError, match="symbolic link"):
        await store.read("link.txt")
    with pytest.raises(ValueError, match="symbolic link"):
        await store.write("link.txt", "stomp")

    # List operations should silently skip the symlink entry rather than raise.
    assert await _list_files(store) == []


async def test_filesystem_store_rejects_in_root_symlinks(tmp_path: Path) -> None:
    """Symlinks whose target lives under the root must still be rejected.

    ``Path.resolve`` collapses the symlink, so a naive resolved-path check
    would silently follow it. The symlink probe must operate on the
    unresolved candidate for this case to fail closed.
    """
    root = tmp_path / "root"
    root.mkdir()
    real = root / "real.txt"
    real.write_text("payload", encoding="utf-8")
    link = root / "alias.txt"
    try:
        link.symlink_to(real)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"Symbolic links are not supported in this environment: {exc!r}")

    store = FileSystemAgentFileStore(root)
    with pytest.raises(ValueError, match="symbolic link"):
        await store.read("alias.txt")
    # The non-symlinked sibling must still be readable.
    assert await store.read("real.txt") == "payload"


async def test_filesystem_store_search_matches_lines_and_filters_globs(tmp_path: Path) -> None:
    """The filesystem store should search files on disk and apply glob filters by file name."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("a.md", "hello\nERROR happens\nbye\r")
    await store.write("b.txt", "ERROR happens too")
    await store.write("c.md", "nothing here")

    results = await store.search("", "error", "*.md")
    assert [result.file_name for result in results] == ["a.md"]
    assert results[0].matching_lines == [FileSearchMatch(line_number=2, line="ERROR happens")]
    assert "ERROR" in results[0].snippet

    results_all = await store.search("", "error")
    assert {result.file_name for result in results_all} == {"a.md", "b.txt"}


async def test_filesystem_store_search_is_recursive_with_root_relative_names(tmp_path: Path) -> None:
    """Recursive filesystem search should walk the subtree and return root-relative names."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("top.md", "ERROR at top")
    await store.write("reports/q1.md", "ERROR in q1")
    await store.write("reports/2024/q2.md", "ERROR in q2")

    direct = await store.search("", "error")
    assert {result.file_name for result in direct} == {"top.md"}

    recursive = await store.search("", "error", recursive=True)
    assert {result.file_name for result in recursive} == {
        "top.md",
        "reports/q1.md",
        "reports/2024/q2.md",
    }

    scoped = await store.search("", "error", "reports/*", recursive=True)
    assert {result.file_name for result in scoped} == {
        "reports/q1.md",
        "reports/2024/q2.md",
    }


async def test_filesystem_store_list_directories(tmp_path: Path) -> None:
    """``list_directories`` should list direct child subdirectories only."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("top.md", "x")
    await store.write("reports/q1.md", "x")
    await store.write("reports/2024/q2.md", "x")
    await store.write("data/raw.csv", "x")

    assert sorted(await _list_dirs(store)) == ["data", "reports"]
    assert sorted(await _list_dirs(store, "reports")) == ["2024"]
    assert await _list_dirs(store, "data") == []
    assert await _list_dirs(store, "missing") == []


async def test_filesystem_store_list_directories_rejects_traversal(tmp_path: Path) -> None:
    """``list_directories`` is security-critical and must reject paths that escape the root."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("reports/q1.md", "x")
    for bad in ("../escape", "/etc", "C:/Windows", ".."):
        with pytest.raises(ValueError):
            await _list_dirs(store, bad)


async def test_filesystem_store_search_and_list_skip_symlinked_directories(tmp_path: Path) -> None:
    """Recursive search must not descend into symlinked dirs and ``list_directories`` must exclude them."""
    target = tmp_path / "outside"
    target.mkdir()
    (target / "secret.md").write_text("ERROR outside the root", encoding="utf-8")

    root = tmp_path / "root"
    root.mkdir()
    (root / "inside.md").write_text("ERROR inside", encoding="utf-8")
    link = root / "linked"
    try:
        link.symlink_to(target, target_is_directory=True)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"Symbolic links are not supported in this environment: {exc!r}")

    store = FileSystemAgentFileStore(root)

    # ``list_directories`` excludes the symlinked directory.
    assert await _list_dirs(store) == []

    # Recursive search does not follow the symlink out of the root.
    results = await store.search("", "error", recursive=True)
    assert {result.file_name for result in results} == {"inside.md"}


async def test_filesystem_store_search_and_list_skip_junctioned_directories(tmp_path: Path) -> None:
    """Recursive search and listing must not follow Windows junctions outside the root."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("ERROR outside the root", encoding="utf-8")

    root = tmp_path / "root"
    root.mkdir()
    (root / "inside.md").write_text("ERROR inside", encoding="utf-8")
    junction = root / "linked"
    create_junction_or_skip(link=junction, target=outside)

    try:
        store = FileSystemAgentFileStore(root)

        with pytest.raises(ValueError):
            await store.read("linked/secret.md")
        assert await _list_dirs(store) == []

        results = await store.search("", "error", recursive=True)
        assert {result.file_name for result in results} == {"inside.md"}
    finally:
        junction.rmdir()


async def test_filesystem_store_search_skips_non_utf8_files(tmp_path: Path) -> None:
    """The filesystem store should silently skip non-UTF-8 files instead of aborting the search."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("notes.md", "ERROR happens here")
    (tmp_path / "blob.bin").write_bytes(b"\x80\x81\x82\x83")

    results = await store.search("", "error")
    assert [result.file_name for result in results] == ["notes.md"]


async def test_filesystem_store_create_directory(tmp_path: Path) -> None:
    """The filesystem store should create directories under the configured root."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.create_directory("nested/inner")
    assert (tmp_path / "nested" / "inner").is_dir()


async def test_filesystem_store_list_files_accepts_blank_directory(tmp_path: Path) -> None:
    """Whitespace-only directory inputs should resolve to the root, matching the in-memory store."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("a.txt", "alpha")
    assert sorted(await _list_files(store, "")) == ["a.txt"]
    assert sorted(await _list_files(store, "   ")) == ["a.txt"]


def test_filesystem_store_requires_non_empty_root() -> None:
    """The filesystem store constructor should refuse blank root paths."""
    with pytest.raises(ValueError, match="must not be empty"):
        FileSystemAgentFileStore("")
    with pytest.raises(ValueError, match="must not be empty"):
        FileSystemAgentFileStore("   ")


async def test_filesystem_store_does_not_create_root_until_write(tmp_path: Path) -> None:
    """Constructing a store must not touch the filesystem; the root is created lazily on first write."""
    root = tmp_path / "does-not-exist-yet"

    # Construction performs no filesystem writes (safe in read-only CWDs).
    store = FileSystemAgentFileStore(root)
    assert not root.exists()

    # Read-only operations tolerate the missing root without creating it.
    assert await store.read("a.txt") is None
    assert await store.file_exists("a.txt") is False
    assert await _list_files(store) == []
    assert await _list_dirs(store) == []
    assert await store.search("", ".") == []
    assert not root.exists()

    # The first write creates the root directory lazily.
    await store.write("a.txt", "alpha")
    assert root.is_dir()
    assert await store.read("a.txt") == "alpha"








def test_read_only_tools_auto_approval_rule() -> None:
    """The read-only rule approves only the non-mutating tools."""
    approved = {
        FileAccessProvider.READ_TOOL_NAME,
        FileAccessProvider.LS_TOOL_NAME,
        FileAccessProvider.GREP_TOOL_NAME,
    }
    rejected = {
        FileAccessProvider.WRITE_TOOL_NAME,
        FileAccessProvider.DELETE_TOOL_NAME,
        FileAccessProvider.REPLACE_TOOL_NAME,
        FileAccessProvider.REPLACE_LINES_TOOL_NAME,
        "some_other_tool",
    }
    for name in approved:
        call = Content("function_call", call_id="c1", name=name, arguments="{}")
        assert FileAccessProvider.read_only_tools_auto_approval_rule(call) is True
    for name in rejected:
        call = Content("function_call", call_id="c1", name=name, arguments="{}")
        assert FileAccessProvider.read_only_tools_auto_approval_rule(call) is False
    # A hosted tool with the same name (carrying a server_label) is NOT auto-approved.
    for name in approved:
        hosted = Content(
            "function_call",
            call_id="c1",
            name=name,
            arguments="{}",
            additional_properties={"server_label": "remote"},
        )
        assert FileAccessProvider.read_only_tools_auto_approval_rule(hosted) is False


def test_all_tools_auto_approval_rule() -> None:
    """The all-tools rule approves every file-access tool but nothing else."""
    for name in (
        FileAccessProvider.WRITE_TOOL_NAME,
        FileAccessProvider.READ_TOOL_NAME,
        FileAccessProvider.DELETE_TOOL_NAME,
        FileAccessProvider.LS_TOOL_NAME,
        FileAccessProvider.GREP_TOOL_NAME,
        FileAccessProvider.REPLACE_TOOL_NAME,
        FileAccessProvider.REPLACE_LINES_TOOL_NAME,
    ):
        call = Content("function_call", call_id="c1", name=name, arguments="{}")
        assert FileAccessProvider.all_tools_auto_approval_rule(call) is True
        # A hosted tool with the same name (carrying a server_label) is NOT auto-approved.
        hosted = Content(
            "function_call",
            call_id="c1",
            name=name,
            arguments="{}",
            additional_properties={"server_label": "remote"},
        )
        assert FileAccessProvider.all_tools_auto_approval_rule(hosted) is False

    unrelated = Content("function_call", call_id="c1", name="some_other_tool", arguments="{}")
    assert FileAccessProvider.all_tools_auto_approval_rule(unrelated) is False




async def test_file_access_provider_accepts_custom_instructions() -> None:
    """Custom instructions should override the default banner."""
    store = InMemoryAgentFileStore()
    provider = FileAccessProvider(store=store, instructions="custom-banner")
    assert provider.instructions == "custom-banner"
    assert provider.source_id == DEFAULT_FILE_ACCESS_SOURCE_ID


async def test_in_memory_store_write_file_raises_when_exists_and_no_overwrite() -> None:
    """The atomic exclusive-create path should raise ``FileExistsError`` under the lock."""
    store = InMemoryAgentFileStore()
    await store.write("plan.md", "v1")

    with pytest.raises(FileExistsError):
        await store.write("plan.md", "v2", overwrite=False)

    # The original content is preserved.
    assert await store.read("plan.md") == "v1"

    # Default ``overwrite=True`` still replaces.
    await store.write("plan.md", "v3")
    assert await store.read("plan.md") == "v3"


async def test_filesystem_store_write_file_raises_when_exists_and_no_overwrite(tmp_path: Path) -> None:
    """The filesystem store should use exclusive-create semantics when ``overwrite=False``."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("plan.md", "v1")

    with pytest.raises(FileExistsError):
        await store.write("plan.md", "v2", overwrite=False)

    assert (tmp_path / "plan.md").read_text(encoding="utf-8") == "v1"

    await store.write("plan.md", "v3", overwrite=True)
    assert (tmp_path / "plan.md").read_text(encoding="utf-8") == "v3"




async def test_filesystem_store_symlink_probe_fails_closed_on_oserror(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If ``Path.lstat`` raises during the probe, the operation must be refused."""
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("same/same/ok.txt", "content")

    original_lstat = Path.lstat
    failing_path = store.root_path / "same" / "same"

    def fail_for_target(self: Path) -> os.stat_result:
        if self == failing_path:
            raise PermissionError("access denied")
        return original_lstat(self)

    monkeypatch.setattr(Path, "lstat", fail_for_target)

    with pytest.raises(ValueError, match=r"'same/same'"):
        await store.read("same/same/ok.txt")




def test_file_access_harness_classes_are_marked_experimental() -> None:
    """File-access harness public classes should expose HARNESS experimental metadata."""
    assert getattr(AgentFileStore, "__feature_id__", None) == ExperimentalFeature.HARNESS.value
    assert getattr(InMemoryAgentFileStore, "__feature_id__", None) == ExperimentalFeature.HARNESS.value
    assert getattr(FileSystemAgentFileStore, "__feature_id__", None) == ExperimentalFeature.HARNESS.value
    assert getattr(FileSearchMatch, "__feature_id__", None) == ExperimentalFeature.HARNESS.value
    assert getattr(FileSearchResult, "__feature_id__", None) == ExperimentalFeature.HARNESS.value
    assert getattr(FileAccessProvider, "__feature_id__", None) == ExperimentalFeature.HARNESS.value
    assert ".. warning:: Experimental" in (FileAccessProvider.__doc__ or "")


async def test_in_memory_store_preserves_original_case_on_list_and_search() -> None:
    """``list_files`` / ``search`` should return original-case names, not lowercased keys.

    Matches :class:`FileSystemAgentFileStore` on case-preserving filesystems so
    tests written against the in-memory backend cannot encode a contract that
    will diverge in production.
    """
    store = InMemoryAgentFileStore()
    await store.write("Plan.MD", "ERROR happens here\n")
    await store.write("Reports/Q1.MD", "alpha")

    # list_files keeps the original case
    assert sorted(await _list_files(store)) == ["Plan.MD"]
    assert sorted(await _list_files(store, "Reports")) == ["Q1.MD"]

    # case-insensitive directory lookup still works
    assert sorted(await _list_files(store, "reports")) == ["Q1.MD"]

    # search emits the original-case file name in FileSearchResult
    results = await store.search("", "error", "*.MD")
    assert [r.file_name for r in results] == ["Plan.MD"]

    # read remains case-insensitive
    assert await store.read("plan.md") == "ERROR happens here\n"


async def test_filesystem_store_read_file_raises_value_error_on_non_utf8(tmp_path: Path) -> None:
    """Binary / non-UTF-8 files should raise a clean ``ValueError`` rather than ``UnicodeDecodeError``.

    The tool-layer wrapper relies on this contract to convert the failure into
    a recoverable string response for the agent.
    """
    store = FileSystemAgentFileStore(tmp_path)
    (tmp_path / "blob.bin").write_bytes(b"\x80\x81\x82\x83")

    with pytest.raises(ValueError, match="not UTF-8 text"):
        await store.read("blob.bin")








_NEEDS_SYMLINK = "Symbolic links are not supported in this environment"


async def test_filesystem_store_rejects_symlink_on_delete_search_and_list(tmp_path: Path) -> None:
    """The same symlink probe must front delete/search/list, not just read/write."""
    target = tmp_path / "outside.txt"
    target.write_text("outside", encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    link = root / "link.txt"
    try:
        link.symlink_to(target)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"{_NEEDS_SYMLINK}: {exc!r}")

    store = FileSystemAgentFileStore(root)

    with pytest.raises(ValueError, match="symbolic link"):
        await store.delete("link.txt")

    # search of the root never touches the symlink leaf directly, but
    # search of a symlinked *directory* path must be rejected by the
    # safe-directory resolver.
    dir_link = root / "alias_dir"
    other_dir = tmp_path / "outside_dir"
    other_dir.mkdir()
    try:
        dir_link.symlink_to(other_dir)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"{_NEEDS_SYMLINK}: {exc!r}")

    with pytest.raises(ValueError, match="symbolic link"):
        await store.search("alias_dir", "anything")
    with pytest.raises(ValueError, match="symbolic link"):
        await _list_files(store, "alias_dir")


async def test_filesystem_store_rejects_symlinked_intermediate_directory(tmp_path: Path) -> None:
    """A symlink used as a non-leaf path segment must still be rejected.

    The classic escape vector is ``root/aliased_dir/file.txt`` where
    ``aliased_dir`` is a symlink to somewhere outside the root. The
    ``_throw_if_contains_symlink`` walk must check every segment, not only
    the leaf.
    """
    outside = tmp_path / "outside_dir"
    outside.mkdir()
    (outside / "secret.txt").write_text("payload", encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    link = root / "aliased_dir"
    try:
        link.symlink_to(outside)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"{_NEEDS_SYMLINK}: {exc!r}")

    store = FileSystemAgentFileStore(root)

    for op in ("read", "write", "delete"):
        with pytest.raises(ValueError, match="symbolic link"):
            if op == "read":
                await store.read("aliased_dir/secret.txt")
            elif op == "write":
                await store.write("aliased_dir/secret.txt", "stomp")
            else:
                await store.delete("aliased_dir/secret.txt")










