// A Waymark beside a TYPO3 demo database on MariaDB, as an agency runs it:
// `waymark typo3 demo` into a fresh database, `waymark import --typo3` of
// Waymark's part, then `waymark serve --typo3` on a free port. MariaDB is
// reached with the mariadb client as root on 127.0.0.1:3306 (E2E_MARIADB_HOST,
// E2E_MARIADB_PORT, E2E_MARIADB_USER change it).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { binary, ready, api } from './server.js';

const host = process.env.E2E_MARIADB_HOST || '127.0.0.1';
const port = process.env.E2E_MARIADB_PORT || '3306';
const user = process.env.E2E_MARIADB_USER || 'root';

// mariadb runs one statement with the mariadb client and returns its rows,
// tab-separated, without the header.
export function mariadb(sql, database = '') {
  const args = ['-h', host, '-P', port, '-u', user, '-N', '-B', '-e', sql];
  if (database) args.push(database);
  return execFileSync('mariadb', args, { encoding: 'utf8' }).trimEnd();
}

// startBesideTYPO3 resolves to a server like startDemo's, plus typo3(sql):
// a query on the TYPO3 database.
export async function startBesideTYPO3({ timeoutMs = 120000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-e2e-typo3-'));
  const name = `waymark_e2e_${randomBytes(5).toString('hex')}`;
  mariadb(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  const dsn = `mysql://${user}@${host}:${port}/${name}`;
  const sites = join(dir, 'config', 'sites');
  const db = `sqlite:${join(dir, 'waymark.db')}`;
  const run = (...args) => execFileSync(binary(), args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const drop = () => { try { mariadb(`DROP DATABASE IF EXISTS ${name}`); } catch { /* best effort */ } };
  try {
    run('typo3', 'demo', '--typo3', dsn, '--typo3-sites', sites);
    run('import', '--db', db, '--typo3', dsn, '--typo3-sites', sites, join(dir, 'config', 'waymark-demo.json'));
  } catch (err) {
    drop();
    throw new Error(`preparing Waymark beside TYPO3: ${err.message}\n${err.stderr || ''}`);
  }
  const child = spawn(binary(), ['serve', '--addr', '127.0.0.1:0', '--db', db, '--typo3', dsn, '--typo3-sites', sites, '--workers', '1'], {
    cwd: dir, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise((resolveURL, reject) => {
    const timer = setTimeout(() => reject(new Error(`waymark serve --typo3 printed no URL within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk) => {
      output += chunk;
      for (const line of output.split('\n')) {
        try {
          const rec = JSON.parse(line);
          if (rec.msg === 'waymark serving' && rec.url) { clearTimeout(timer); resolveURL(rec.url); return; }
        } catch { /* not a JSON line */ }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`waymark serve --typo3 exited with ${code}:\n${output}`)); });
  }).catch((err) => { drop(); throw err; });
  await ready(url, timeoutMs, () => `waymark serve --typo3 at ${url} not ready:\n${output}`);
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url,
    output: () => output,
    typo3: (sql) => mariadb(sql, name),
    api: (token, method, path, body) => api(url, token, method, path, body),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        let timer;
        const stopped = await Promise.race([exited.then(() => true), new Promise((r) => { timer = setTimeout(() => r(false), 10000); })]);
        clearTimeout(timer);
        if (!stopped) {
          child.kill('SIGKILL');
          await exited;
        }
      }
      drop();
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
