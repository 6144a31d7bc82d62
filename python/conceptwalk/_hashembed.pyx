# cython: language_level=3, boundscheck=False, wraparound=False
"""Interning of string ids (placeholder body replaced below)."""
