"""The offline case-guided planner: a deterministic policy (``policy``) reading the rendered
planner prompt (``situation``), asking when the question is unclear (``clarity``), covering
the requirements (``coverage``), served as a chat model (``model``). No language model."""
