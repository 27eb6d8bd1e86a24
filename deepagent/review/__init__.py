"""Plan review: a run pauses before its Action Tree runs, shows the plan, and goes on when
the reviewer approves, edits, rejects or cancels it."""
