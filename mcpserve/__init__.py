"""The MCP server, `agent-memory mcp`: the CLI's commands as Model Context Protocol tools, over
stdio or streamable HTTP (mcpserve.command). It stands on the CLI (it runs the commands by the
CLI's own code); nothing in the product imports it but the command's dispatch, by name."""
