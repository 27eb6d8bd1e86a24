"""The evaluation's command groups (`deepagent eval`, `deepagent cases`, `deepagent
bench`), mounted through the `deepagent.cli` entry point as business modules mount
theirs: the engine never imports `eval/`."""
