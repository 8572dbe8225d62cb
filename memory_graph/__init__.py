"""memory-graph: governed long-term user memory for LangGraph agents."""
