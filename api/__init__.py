"""The Python API: agent-memory's commands as methods (`agent_memory.Memory`,
`agent_memory.AsyncMemory`), run in the caller's process by the command line's own code, so a
method answers what its command prints, as typed results, and fails as its command does, as an
exception carrying the same code, message and exit code.

Nothing here is imported by `import agent_memory` until it is used (the package's lazy
attributes), and nothing heavy is imported until a call needs it.
"""
