"""SubAgents: the dispatch front and back-end protocol (``dispatch``), the in-process
back end (``local``); the RQ back end is ``deepagent.distributed.rq_runner``."""
