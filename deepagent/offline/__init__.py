"""Deterministic offline policies for the model roles (no language model involved)."""
