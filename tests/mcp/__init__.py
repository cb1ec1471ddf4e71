"""Tests of agentnb: mcp."""
