"""Tests of agentnb: approval."""
