"""Evaluation: labelled sets (eval/sets/), runners and metrics."""
