"""The case library: past questions with their modules, approach and plan template."""
