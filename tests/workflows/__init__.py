"""Tests of agentnb: workflows."""
