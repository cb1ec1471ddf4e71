"""Citations a provider attaches to text: which source backs which span of the answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict

__all__ = ["Annotation", "TextSpanRegion"]


class TextSpanRegion(TypedDict, total=False):
    """The characters ``[start_index, end_index)`` of a text content an annotation refers to."""

    type: Literal["text_span"]
    start_index: int
    end_index: int


class Annotation(TypedDict, total=False):
    """A citation on text content (``Content.annotations``): the source's title, URL or file, and the spans.

    Example:
        >>> Annotation(type="citation", title="Docs", url="https://example.com", annotated_regions=[
        ...     TextSpanRegion(type="text_span", start_index=0, end_index=4)])["title"]
        'Docs'
    """

    type: Literal["citation"]
    title: str
    url: str
    file_id: str
    tool_name: str
    snippet: str
    annotated_regions: Sequence[TextSpanRegion]
    additional_properties: dict[str, Any]
    raw_representation: Any
