"""The agent frameworks' session stores on agent-memory's Python API: each module imports its
framework (an optional extra: `openai-agents`, `langchain`), and nothing imports them unless
asked."""
