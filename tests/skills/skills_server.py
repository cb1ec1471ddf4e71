"""An MCP server (official ``mcp`` SDK, stdio) that serves Agent Skills at ``skill://index.json``.

It lists a ``skill-md`` skill, a good ZIP archive, a gzip TAR archive, and hostile archives (a ``..``
member, an absolute member, too many files, an uncompressed bomb) plus an entry of an unknown type.
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile

from mcp.server.mcpserver import MCPServer

SKILL_MD = "---\nname: {name}\ndescription: The {name} skill.\n---\nUse {name} wisely.\n"


def zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def tar_gz_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("packed-tar/evil-link.md")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        archive.addfile(link)
    return buffer.getvalue()


def md(name: str) -> bytes:
    return SKILL_MD.format(name=name).encode()


ARCHIVES: dict[str, bytes] = {
    "packed": zip_of(
        {
            "packed/SKILL.md": md("packed"),
            "packed/references/guide.md": b"the packed guide",
            "packed/scripts/run.py": b"print('never run')",
        }
    ),
    "packed-tar": tar_gz_of({"packed-tar/SKILL.md": md("packed-tar"), "packed-tar/notes.txt": b"tar notes"}),
    "climber": zip_of({"climber/SKILL.md": md("climber"), "climber/../../outside.md": b"x"}),
    "absolute": zip_of({"absolute/SKILL.md": md("absolute"), "/etc/owned.md": b"x"}),
    "crowded": zip_of({"crowded/SKILL.md": md("crowded"), **{f"crowded/f{i}.md": b"x" for i in range(30)}}),
    "bomb": zip_of({"bomb/SKILL.md": md("bomb"), "bomb/big.txt": b"0" * (2 * 1024 * 1024)}),
}

INDEX = {
    "$schema": "https://agentskills.io/schema/index/v0.2.0.json",
    "skills": [
        {
            "name": "remote-guide",
            "type": "skill-md",
            "description": "A guide served over MCP.",
            "url": "skill://remote-guide/SKILL.md",
        },
        *({"name": name, "type": "archive", "url": f"skill://archives/{name}.bin"} for name in ARCHIVES),
        {"name": "templated", "type": "mcp-resource-template", "url": "skill://{x}"},
    ],
}

server = MCPServer("skills")


@server.resource("skill://index.json", mime_type="application/json")
def index() -> str:
    return json.dumps(INDEX)


@server.resource("skill://remote-guide/SKILL.md", mime_type="text/markdown")
def remote_guide() -> str:
    return "---\nname: remote-guide\ndescription: A guide served over MCP.\n---\nRead references/faq.md.\n"


@server.resource("skill://remote-guide/references/faq.md", mime_type="text/markdown")
def remote_faq() -> str:
    return "Q: why? A: because."


@server.resource("skill://archives/{name}.bin", mime_type="application/octet-stream")
def archive(name: str) -> bytes:
    return ARCHIVES[name]


if __name__ == "__main__":
    server.run("stdio")
