"""`python -m deepagent` runs the CLI."""

from deepagent.cli.app import main

main()
