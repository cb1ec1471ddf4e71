"""Tests of agentnb: parity."""
