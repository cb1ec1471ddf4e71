"""File stores: confinement to the root (the model picks the paths), atomic writes, listing and search."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentnb.harness import (
    AgentFileStore,
    FileSearchMatch,
    FileSearchResult,
    FileStoreEntry,
    FileSystemAgentFileStore,
    InMemoryAgentFileStore,
)

ESCAPES = [
    "../x.txt",
    "a/../../x.txt",
    "/etc/passwd",
    "\\windows\\x",
    "C:/x.txt",
    "c:x",
    "./x",
    "a/./b",
    " .. /x",
    "a\x00b",
]


@pytest.fixture(params=["memory", "disk"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> AgentFileStore:
    return InMemoryAgentFileStore() if request.param == "memory" else FileSystemAgentFileStore(tmp_path / "root")


@pytest.mark.parametrize("path", ESCAPES)
async def test_paths_that_escape_the_root_are_refused_by_every_operation(store: AgentFileStore, path: str) -> None:
    with pytest.raises(ValueError, match=r"Invalid path|NUL"):
        await store.write(path, "x")
    with pytest.raises(ValueError):
        await store.read(path)
    with pytest.raises(ValueError):
        await store.delete(path)
    with pytest.raises(ValueError):
        await store.file_exists(path)


async def test_write_read_list_delete_round_trip(store: AgentFileStore) -> None:
    await store.write("notes/plan.md", "1. ship\n2. rest")
    await store.write("top.txt", "hello")
    assert await store.read("notes/plan.md") == "1. ship\n2. rest"
    assert await store.read("notes\\plan.md") == "1. ship\n2. rest"  # backslashes are separators
    assert await store.list_children() == [FileStoreEntry("notes", "directory"), FileStoreEntry("top.txt", "file")]
    assert await store.list_children("notes") == [FileStoreEntry("plan.md", "file")]
    assert await store.file_exists("top.txt") and not await store.file_exists("nope.txt")
    assert await store.delete("top.txt") is True
    assert await store.delete("top.txt") is False
    assert await store.read("top.txt") is None


async def test_exclusive_create_refuses_an_existing_file(store: AgentFileStore) -> None:
    await store.write("a.txt", "first", overwrite=False)
    with pytest.raises(FileExistsError):
        await store.write("a.txt", "second", overwrite=False)
    assert await store.read("a.txt") == "first"


async def test_a_file_path_may_not_end_with_a_separator(store: AgentFileStore) -> None:
    with pytest.raises(ValueError, match="must not end"):
        await store.write("dir/", "x")


async def test_search_numbers_lines_relative_names_and_recursion(store: AgentFileStore) -> None:
    await store.write("a.md", "alpha\nbeta ERROR here\ngamma")
    await store.write("logs/b.log", "error one\nfine\nError two")
    flat = await store.search("", "error")
    assert [r.file_name for r in flat] == ["a.md"]
    assert flat[0].matching_lines == [FileSearchMatch(2, "beta ERROR here")]
    deep = await store.search("", "error", recursive=True)
    assert sorted(r.file_name for r in deep) == ["a.md", "logs/b.log"]
    logs = await store.search("logs", "error", "*.log")
    assert logs == [
        FileSearchResult(
            "b.log", "error one\nfine\nError two", [FileSearchMatch(1, "error one"), FileSearchMatch(3, "Error two")]
        )
    ]
    assert await store.search("", "error", "*.txt", recursive=True) == []


async def test_overlong_patterns_are_refused(store: AgentFileStore) -> None:
    with pytest.raises(ValueError, match="too long"):
        await store.search("", "a" * 300)


def test_dtos_round_trip_and_validate() -> None:
    result = FileSearchResult("x.md", "snip", [FileSearchMatch(4, "line")])
    assert FileSearchResult.from_dict(result.to_dict()) == result
    assert FileStoreEntry.from_dict({"name": "d", "type": "directory"}) == FileStoreEntry("d", "directory")
    with pytest.raises(ValueError):
        FileStoreEntry("x", "symlink")
    with pytest.raises(ValueError):
        FileSearchMatch(0, "x")


async def test_in_memory_names_match_without_case_and_keep_theirs() -> None:
    store = InMemoryAgentFileStore()
    await store.write("Plan.MD", "x")
    assert await store.read("plan.md") == "x"
    assert await store.list_children() == [FileStoreEntry("Plan.MD", "file")]


# -- disk only ---------------------------------------------------------------------------------------------
async def test_the_root_is_made_on_first_write_not_on_construction(tmp_path: Path) -> None:
    root = tmp_path / "later"
    store = FileSystemAgentFileStore(root)
    assert not root.exists()
    assert await store.list_children() == []
    await store.write("a.txt", "x")
    assert (root / "a.txt").read_text() == "x"


@pytest.mark.parametrize("link_at", ["leaf", "middle", "first"])
async def test_a_symbolic_link_at_any_segment_is_refused(tmp_path: Path, link_at: str) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    if link_at == "leaf":
        (root / "a" / "b" / "f.txt").symlink_to(outside / "secret.txt")
    elif link_at == "middle":
        (root / "a" / "b").rmdir()
        (root / "a" / "b").symlink_to(outside)
        (outside / "f.txt").write_text("secret")
    else:
        (root / "a" / "b").rmdir()
        (root / "a").rmdir()
        (root / "a").symlink_to(outside)
        (outside / "b").mkdir()
        (outside / "b" / "f.txt").write_text("secret")
    store = FileSystemAgentFileStore(root)
    for op in (store.read("a/b/f.txt"), store.write("a/b/f.txt", "pwned"), store.delete("a/b/f.txt")):
        with pytest.raises(ValueError, match="symbolic link"):
            await op
    assert "pwned" not in {p.read_text() for p in outside.rglob("*") if p.is_file()}
    assert (outside / "secret.txt").read_text() == "secret"


async def test_links_inside_the_root_are_neither_listed_nor_searched(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("password=1")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    (root / "real.txt").write_text("password=2")
    store = FileSystemAgentFileStore(root)
    assert [e.name for e in await store.list_children()] == ["real.txt"]
    assert [r.file_name for r in await store.search("", "password", recursive=True)] == ["real.txt"]


async def test_writes_are_atomic_and_leave_no_temporary_files(tmp_path: Path) -> None:
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("data.txt", "old")
    os.chmod(tmp_path / "data.txt", 0o640)
    inode = (tmp_path / "data.txt").stat().st_ino
    await store.write("data.txt", "new")
    assert (tmp_path / "data.txt").read_text() == "new"
    assert (tmp_path / "data.txt").stat().st_ino != inode  # replaced by rename, not truncated in place
    assert oct((tmp_path / "data.txt").stat().st_mode & 0o777) == oct(0o640)  # the file's mode is kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.txt"]


async def test_a_failed_exclusive_create_leaves_nothing_behind(tmp_path: Path) -> None:
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("a.txt", "one")
    with pytest.raises(FileExistsError):
        await store.write("a.txt", "two", overwrite=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


async def test_non_utf8_files_are_a_clear_error_on_read_and_skipped_by_search(tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"\xff\xfe error")
    (tmp_path / "ok.txt").write_text("error")
    store = FileSystemAgentFileStore(tmp_path)
    with pytest.raises(ValueError, match="not UTF-8"):
        await store.read("bin.dat")
    assert [r.file_name for r in await store.search("", "error")] == ["ok.txt"]


def test_an_empty_root_is_refused() -> None:
    with pytest.raises(ValueError, match="root_directory"):
        FileSystemAgentFileStore("  ")


@pytest.mark.parametrize("path", ["....//x.txt", "．．/x.txt", "..%2fx.txt", "a/...", "CON", "x\u202e.txt"])
async def test_lookalike_names_are_ordinary_names_inside_the_root(tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    store = FileSystemAgentFileStore(root)
    await store.write(path, "kept inside")
    inside = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(inside) == 1 and inside[0].resolve().is_relative_to(root.resolve())
    assert await store.read(path) == "kept inside"


async def test_case_variants_of_one_name_on_disk_follow_the_file_system(tmp_path: Path) -> None:
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("Report.md", "upper")
    await store.write("report.md", "lower")
    # Linux file systems tell case apart: two files, neither clobbered; the names never leave the root.
    assert {p.name for p in tmp_path.iterdir()} == {"Report.md", "report.md"}
    assert await store.read("Report.md") == "upper"


async def test_a_segment_that_cannot_be_checked_for_links_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileSystemAgentFileStore(tmp_path)
    await store.write("a/b/ok.txt", "x")
    real_lstat = Path.lstat
    blocked = store.root_path / "a" / "b"

    def lstat(self: Path) -> os.stat_result:
        if self == blocked:
            raise PermissionError("access denied")
        return real_lstat(self)

    monkeypatch.setattr(Path, "lstat", lstat)
    with pytest.raises(ValueError, match=r"could not check 'a/b' for symbolic links"):
        await store.read("a/b/ok.txt")
