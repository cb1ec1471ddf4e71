"""Tests of agentnb: openai."""
