"""LangGraph nodes, tools and the prebuilt agent for memory-graph."""
