"""The evaluation harness: eval sets of whole runs, reference facts, a runner, metrics and
judges (docs/evaluation.md)."""
