"""DeepAgent orchestration service."""
