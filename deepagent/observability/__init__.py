"""Operability: traces (``tracing``, ``spans``), Prometheus metrics (``metrics``), JSON run
logs (``logs``) and the per-run hook the Agent calls (``observer``)."""
