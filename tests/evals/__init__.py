"""Tests of agentnb: evals."""
