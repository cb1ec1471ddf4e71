"""Tests of agentnb: devui."""
