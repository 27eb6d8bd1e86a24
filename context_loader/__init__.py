"""Context loading: modules, tools, skills, cases and parameters before planning."""
