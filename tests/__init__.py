"""Tests of agentnb (a package, so helpers import as tests.<area>.<module>)."""
