"""Tests of agentnb: local."""
