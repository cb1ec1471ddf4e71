"""An agentnb agent served over MCP stdio (``python -m tests.mcp.servers.agent_server [agent|tools|both]``)."""

from __future__ import annotations

import sys
from typing import Annotated

import anyio

from agentnb import Agent, Content, tool
from agentnb.local import ScriptedChatClient
from agentnb.mcp import serve_stdio


@tool
def get_specials() -> str:
    """Return the specials from the menu."""
    return "Special Soup: Clam Chowder"


@tool
def get_item_price(menu_item: Annotated[str, "The name of the menu item."]) -> str:
    """Return the price of a menu item."""
    return f"{menu_item}: $9.99"


@tool(approval_mode="always_require")
def refund(order: str) -> str:
    """Refund an order (needs approval)."""
    return f"refunded {order}"


def build_agent() -> Agent:
    client = ScriptedChatClient(
        [
            Content.from_function_call("c1", "get_specials", {}),
            "Today's special soup is Clam Chowder.",
        ]
    )
    return Agent(
        client,
        name="RestaurantAgent",
        description="Answer questions about the menu.",
        tools=[get_specials, get_item_price, refund],
    )


async def main() -> None:
    expose = sys.argv[1] if len(sys.argv) > 1 else "agent"
    await serve_stdio(build_agent().as_mcp_server(expose=expose))  # type: ignore[arg-type]


if __name__ == "__main__":
    anyio.run(main)
