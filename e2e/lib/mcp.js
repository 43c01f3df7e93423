// An MCP client of the official TypeScript SDK connected to a demo's /mcp
// (Streamable HTTP) as a demo user, by API token.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { binary } from './server.js';

// connectMCP connects as token; elicit, when given, answers each
// elicitation/create request (the client then declares the capability).
export async function connectMCP(url, token, { elicit, headers = {} } = {}) {
  const client = newClient(elicit);
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

// connectStdio starts `waymark mcp --db sqlite:DB` with WAYMARK_TOKEN=token
// and connects to it over its stdin and stdout; stderr (its log) is kept in
// the returned client's stderr().
export async function connectStdio(db, token, { elicit } = {}) {
  const client = newClient(elicit);
  const transport = new StdioClientTransport({
    command: binary(), args: ['mcp', '--db', `sqlite:${db}`],
    env: { ...process.env, WAYMARK_TOKEN: token }, stderr: 'pipe',
  });
  let log = '';
  transport.stderr?.on('data', (chunk) => { log += chunk; });
  client.stderr = () => log;
  await client.connect(transport);
  return client;
}

function newClient(elicit) {
  const client = new Client({ name: 'waymark-e2e', version: '1.0.0' }, { capabilities: elicit ? { elicitation: { form: {} } } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (req) => elicit(req.params));
  return client;
}

// call calls a tool with a timeout a whole tour fits in.
export function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
}

// errorCode is the API code of a tool error ('' when the call succeeded).
export function errorCode(res) {
  return res.isError ? (res.structuredContent?.error?.code ?? 'no code') : '';
}
