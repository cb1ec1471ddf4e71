"""Unit tests for the MCP <-> agentnb content mapping (no server needed)."""

from __future__ import annotations

import base64

import mcp_types as types

from agentnb.mcp._content import content_from_mcp, messages_from_sampling, tool_result_value

PNG = b"\x89PNG\r\n\x1a\n"
PNG_B64 = base64.b64encode(PNG).decode()


def test_blocks_map_to_contents() -> None:
    audio = content_from_mcp(
        types.AudioContent(type="audio", data=base64.b64encode(b"RIFF").decode(), mime_type="audio/wav")
    )
    assert (audio.type, audio.data, audio.media_type) == ("data", b"RIFF", "audio/wav")
    blob = content_from_mcp(
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="file:///a.png", mime_type="image/png", blob=base64.b64encode(PNG).decode()
            ),
        )
    )
    assert (blob.type, blob.data, blob.additional_properties["uri"]) == ("data", PNG, "file:///a.png")
    link = content_from_mcp(
        types.ResourceLink(type="resource_link", uri="https://example.com/doc", name="doc", mime_type="text/html")
    )
    assert (link.type, link.uri, link.media_type, link.additional_properties["name"]) == (
        "uri",
        "https://example.com/doc",
        "text/html",
        "doc",
    )


def test_unpadded_base64_is_accepted() -> None:
    data = base64.urlsafe_b64encode(b"\xff\xfe\xfd\xfc").decode().rstrip("=")
    image = content_from_mcp(types.ImageContent(type="image", data=data, mime_type="image/png"))
    assert image.data == b"\xff\xfe\xfd\xfc"


def test_result_values() -> None:
    text = [content_from_mcp(types.TextContent(type="text", text=t)) for t in ("a", "b")]
    assert tool_result_value(text) == "a\nb"
    assert tool_result_value([], {"x": 1}) == {"x": 1}
    assert tool_result_value([]) == ""
    image = content_from_mcp(
        types.ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png")
    )
    assert tool_result_value([*text, image]) == [*text, image]


def test_sampling_messages_keep_roles_and_system_prompt() -> None:
    params = types.CreateMessageRequestParams(
        messages=[
            types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi")),
            types.SamplingMessage(role="assistant", content=types.TextContent(type="text", text="hello")),
        ],
        max_tokens=10,
        system_prompt="sys",
    )
    assert [(m.role, m.text) for m in messages_from_sampling(params)] == [
        ("system", "sys"),
        ("user", "hi"),
        ("assistant", "hello"),
    ]
