"""The reference embedder: the embedding service's commands over deterministic local models."""
