"""Tests of agentnb: observability."""
