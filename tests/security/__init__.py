"""Tests of agentnb: security."""
