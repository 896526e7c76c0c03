// Drives `agent-memory mcp` with the TypeScript SDK's own client (a client nobody on this
// project wrote). Reads a plan as JSON on stdin: {command, args, env, cwd, calls: [[tool,
// arguments], ...]} to start the server over stdio, or {url, headers, calls} to reach one
// serving streamable HTTP (`mcp --listen`); prints one JSON object: the tools listed and, per
// call, what the client made of it. The client checks each structured result against the
// tool's output schema (ajv) and throws when it does not match: such a call is reported with
// `thrown`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } })
  : new StdioClientTransport({
    command: plan.command, args: plan.args, env: plan.env, cwd: plan.cwd, stderr: "inherit",
  });
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const results = [];
for (const [name, args] of plan.calls) {
  try {
    const result = await client.callTool({ name, arguments: args });
    results.push({ name, isError: Boolean(result.isError), structured: result.structuredContent ?? null,
                   text: result.content?.[0]?.text ?? null });
  } catch (error) {
    results.push({ name, thrown: String(error && error.message || error), code: error?.code ?? null });
  }
}
await client.close();
process.stdout.write(JSON.stringify({
  protocol: client.getServerVersion() ? "connected" : "unknown",
  protocolVersion: transport.protocolVersion ?? null,
  tools: listed.tools.map((t) => ({ name: t.name, hasOutputSchema: Boolean(t.outputSchema) })),
  results,
}) + "\n");
