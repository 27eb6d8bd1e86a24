"""Planning: the planner's context parts, their rendering, and decision parsing."""
