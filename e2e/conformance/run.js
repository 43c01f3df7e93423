// The MCP conformance suite (@modelcontextprotocol/conformance, server mode)
// against a demo's /mcp. The suite sends no credentials, so it talks to a
// small local proxy that adds a demo editor's API token to every request
// and passes everything else through unchanged. Scenarios that need the
// suite's own test tools, prompts or resources are listed, each with its
// reason, in expected-failures.yaml; any other failure — and a listed
// scenario that passes — fails the run.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { startDemo, logins } from '../lib/server.js';

const here = dirname(fileURLToPath(import.meta.url));
const server = await startDemo();
const target = new URL(server.url);

const proxy = http.createServer((req, res) => {
  // Host and Origin pass unchanged: the server judges them as the client sent them.
  const headers = { ...req.headers, authorization: `Bearer ${logins.erika.token}` };
  const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', (err) => { res.writeHead(502); res.end(String(err)); });
  req.pipe(up);
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${proxy.address().port}/mcp`;

const cli = join(here, '..', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const args = [cli, 'server', '--url', url, '--expected-failures', join(here, 'expected-failures.yaml'), ...process.argv.slice(2)];
const code = await new Promise((resolve) => {
  const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: here });
  child.on('exit', (c) => resolve(c ?? 1));
});
proxy.close();
await server.stop();
process.exit(code);
