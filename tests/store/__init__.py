"""Tests of agentnb: store."""
