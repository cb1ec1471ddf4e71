"""Tests of agentnb: mcp/servers."""
