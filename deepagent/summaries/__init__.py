"""Summaries of the planner's history: what a summary says (``summarizer``) and when one
is made and swapped in (``scheduler``)."""
