"""SubAgents on RQ workers: the Redis connection, the job, the runner and the worker."""
