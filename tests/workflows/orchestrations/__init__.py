"""Tests of agentnb: workflows/orchestrations."""
