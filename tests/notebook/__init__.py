"""Tests of agentnb: notebook."""
