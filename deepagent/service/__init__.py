"""The HTTP service: runs over the API with SSE, durable records and events, API keys."""
