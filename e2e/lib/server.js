// The server under test: the waymark binary built from this checkout and
// started as `waymark demo` on a free port with a fresh SQLite file.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

let built = '';

// binary builds ./cmd/waymark once per process (WAYMARK_BIN skips the build).
export function binary() {
  if (process.env.WAYMARK_BIN) return process.env.WAYMARK_BIN;
  if (built) return built;
  const out = join(tmpdir(), `waymark-e2e-${process.pid}`, 'waymark');
  const env = { ...process.env, PATH: `/usr/local/go/bin:${process.env.PATH}` };
  execFileSync('go', ['build', '-o', out, './cmd/waymark'], { cwd: repoRoot, env, stdio: ['ignore', 'inherit', 'inherit'] });
  built = out;
  // Each test file runs in a process of its own and builds its own binary
  // (about 100 MB): it goes with the process.
  process.once('exit', () => rmSync(dirname(out), { recursive: true, force: true }));
  return out;
}

// ready resolves once the server at url answers /readyz, and fails with
// failure() after timeoutMs.
export async function ready(url, timeoutMs, failure) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(`${url}/readyz`);
      if (r.ok) return;
    } catch { /* not yet accepting */ }
    if (Date.now() > deadline) throw new Error(failure());
    await new Promise((r) => setTimeout(r, 5));
  }
}

// api calls the JSON API of the server at url by API token and resolves to
// the answer's JSON; an answer other than 2xx fails.
export async function api(url, token, method, path, body) {
  const r = await fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  if (!r.ok) throw new Error(`${method} ${path} = ${r.status}: ${text}`);
  return json;
}

// startDemo starts `waymark demo --addr 127.0.0.1:0 --db <fresh file>`: the
// kernel picks a free port, which the demo prints in its first line. It
// resolves once the server answers /readyz; stop() ends it and removes the file.
// args are more options of `waymark demo` (--demo-pace 300ms: a slow model).
export async function startDemo({ timeoutMs = 30000, args = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-e2e-db-'));
  const db = join(dir, 'demo.db');
  const child = spawn(binary(), ['demo', '--addr', '127.0.0.1:0', '--db', db, ...args], {
    cwd: dir, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise((resolveURL, reject) => {
    const timer = setTimeout(() => reject(new Error(`waymark demo did not print its URL within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk) => {
      output += chunk;
      const m = output.match(/Waymark demo:[^\n]*?(http:\/\/127\.0\.0\.1:\d+)/);
      if (m) { clearTimeout(timer); resolveURL(m[1]); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => { output += chunk; });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`waymark demo exited with ${code}:\n${output}`)); });
  });
  // The URL is printed when the listener is bound; wait until it is ready.
  await ready(url, timeoutMs, () => `waymark demo at ${url} not ready:\n${output}`);
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url,
    db, // the SQLite file, for a second process on the same installation (waymark mcp)
    output: () => output,
    api: (token, method, path, body) => api(url, token, method, path, body),
    async stop() {
      if (child.exitCode === null) {
        // A graceful stop first; a server that does not stop within 5 s is
        // killed and the test fails: it would hang a deployment's restart too.
        child.kill('SIGTERM');
        let timer;
        const stopped = await Promise.race([exited.then(() => true), new Promise((r) => { timer = setTimeout(() => r(false), 5000); })]);
        clearTimeout(timer);
        if (!stopped) {
          child.kill('SIGKILL');
          await exited;
          throw new Error(`waymark demo did not stop within 5 s of SIGTERM:\n${output.split('\n').slice(-20).join('\n')}`);
        }
      }
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Demo logins (internal/demo/site.yaml).
export const logins = {
  erika: { username: 'erika', password: 'erika-demo-pass', token: 'demo-token-erika' }, // editor, German UI
  max: { username: 'max', password: 'max-demo-pass', token: 'demo-token-max' }, // editor, German UI, Services only
  paula: { username: 'paula', password: 'paula-demo-pass', token: 'demo-token-paula' }, // second approver, English UI
  admin: { username: 'admin', password: 'admin-demo-pass', token: 'demo-token-admin' }, // English UI
};
