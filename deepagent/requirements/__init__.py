"""Requirements of a question and the coverage check of a run against them."""
