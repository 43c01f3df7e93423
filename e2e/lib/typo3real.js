// A real TYPO3 13.4 beside Waymark, with the Waymark extension as the
// bridge: the installation made by TYPO3's own installer that .ci/typo3.sh
// hands over in WAYMARK_TEST_TYPO3_MARIADB (or _POSTGRES), served by
// `php -S` on a free port with a secret of the test's own, and
// `waymark serve --typo3 … --typo3-bridge …` beside it with a configuration
// on the offline demo model for TYPO3's group "Editor" (as
// internal/typo3/typo3test/real.go and internal/typo3/bridge do for the Go
// tests). The installation is shared with other tests: the extension
// configuration `waymarkUrl` and the editor's workspace are set for the test
// and, with what the backend keeps of her (be_users.uc: the page module's
// language, the page tree), restored by stop(); users, passwords and group
// rights are left alone.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { binary, ready, api } from './server.js';

// Users of the installations (../shared/typo3/setup.sh, integrations/typo3/Tests).
export const typo3Logins = {
  admin: { username: 'admin', password: 'Admin-Pass-2026!' },
  editor: { username: 'editor', password: 'Editor-Pass-2026!' }, // group "Editor", module web_waymark
};

// realTYPO3 is the installation's folder of env (WAYMARK_TEST_TYPO3_MARIADB
// by default), or '' after skipping t when it is not set — a failure when CI
// is set: .ci/run makes both installations.
export function realTYPO3(t, env = 'WAYMARK_TEST_TYPO3_MARIADB') {
  const dir = process.env[env] || '';
  let why = '';
  if (!dir) why = `${env} is not set: no TYPO3 made by its installer (.ci/typo3.sh, or ../shared/typo3/setup.sh DIR and integrations/typo3/Tests/run.sh DIR)`;
  else if (!existsSync(join(dir, 'vendor', 'waymark', 'typo3-waymark'))) why = `${env}=${dir}: the Waymark extension is not installed there (integrations/typo3/Tests/run.sh DIR installs it)`;
  if (!why) return dir;
  if (process.env.CI) throw new Error(`${why} (CI is set: the test must run)`);
  t.skip(why);
  return '';
}

// php runs code in the installation; boot: with TYPO3 booted as its CLI
// does (boot.php). It returns the output, trimmed.
function php(dir, code, { boot = true } = {}) {
  const file = join(tmpdir(), `waymark-e2e-t3-${randomBytes(6).toString('hex')}.php`);
  writeFileSync(file, `<?php\n${boot ? "require getenv('T3_ROOT') . '/boot.php';\n" : ''}${code}\n`);
  try {
    return execFileSync('php', [file], {
      cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, T3_ROOT: dir, TYPO3_CONTEXT: 'Development' },
    }).trim();
  } catch (err) {
    throw new Error(`php in ${dir}: ${err.message}\n${err.stdout || ''}${err.stderr || ''}\n--- code:\n${code}`);
  } finally {
    rmSync(file, { force: true });
  }
}

// freePort asks the kernel for a free port on 127.0.0.1.
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// The extension configuration of the key waymark, set as run.sh and the
// brief do it (before php -S starts: its opcode cache keeps settings.php).
function setExtensionConfiguration(dir, conf) {
  php(dir, `\\TYPO3\\CMS\\Core\\Utility\\GeneralUtility::makeInstance(\\TYPO3\\CMS\\Core\\Configuration\\ExtensionConfiguration::class)
    ->set('waymark', json_decode(${JSON.stringify(JSON.stringify(conf))}, true));`);
}

// The process "SEO optimieren" as in the demo site (internal/demo/site.yaml):
// the demo model recognizes it by its identifier.
const seoSkill = `---
name: SEO optimieren
description: >-
  Prüft eine Seite auf Suchmaschinen-Tauglichkeit – SEO-Titel, Meta-Beschreibung und
  Überschriften – und schlägt Verbesserungen einzeln zur Freigabe vor.
process: true
allowed-tools: [read_page, read_record, update_page_metadata, update_content, set_progress, highlight_record]
---
# SEO optimieren

1. Lies die Seite mit \`read_page\`.
2. Sammle die Befunde, wichtigste zuerst: Meta-Beschreibung (140–160 Zeichen), SEO-Titel (30–60 Zeichen),
   Überschriften (10–70 Zeichen).
3. Melde mit \`set_progress\`, bei welchem Punkt du bist, und zeige mit \`highlight_record\` auf das Element.
4. Schlage genau eine Änderung pro Zug vor und warte auf die Antwort. Schreibe nie ohne Freigabe.
`;

// startBesideRealTYPO3 serves the installation dir with `php -S` and starts
// Waymark beside it with the bridge. It resolves to
//   { url, typo3: { base, dir, dsn, editorGroup, editor }, output(), api(), sql(), stop() }
// url is Waymark's; typo3.base TYPO3's (ending in "/").
export async function startBesideRealTYPO3(dir, { timeoutMs = 120000 } = {}) {
  const info = JSON.parse(php(dir, `
    use TYPO3\\CMS\\Core\\Utility\\GeneralUtility;
    $d = $GLOBALS['TYPO3_CONF_VARS']['DB']['Connections']['Default'];
    $c = GeneralUtility::makeInstance(\\TYPO3\\CMS\\Core\\Database\\ConnectionPool::class)->getConnectionByName('Default');
    $conf = $GLOBALS['TYPO3_CONF_VARS']['EXTENSIONS']['waymark'] ?? null;
    echo json_encode(['driver' => $d['driver'], 'host' => $d['host'] ?? '127.0.0.1', 'user' => $d['user'] ?? '',
      'password' => $d['password'] ?? '', 'dbname' => $d['dbname'], 'port' => (string)($d['port'] ?? ''),
      'editorGroup' => (int)$c->fetchOne("SELECT uid FROM be_groups WHERE title = 'Editor' AND deleted = 0"),
      'editor' => (int)$c->fetchOne("SELECT uid FROM be_users WHERE username = 'editor' AND deleted = 0"),
      'editorWorkspace' => (int)$c->fetchOne("SELECT workspace_id FROM be_users WHERE username = 'editor' AND deleted = 0"),
      'editorUc' => base64_encode((string)$c->fetchOne("SELECT uc FROM be_users WHERE username = 'editor' AND deleted = 0")),
      'admin' => (int)$c->fetchOne("SELECT uid FROM be_users WHERE username = 'admin' AND deleted = 0"),
      'extension' => $conf]);`));
  if (!info.editorGroup || !info.editor || !info.admin) throw new Error(`${dir}: no group "Editor", user "editor" or "admin": ${JSON.stringify(info)}`);
  const postgres = /pgsql|postgres/.test(info.driver);
  const scheme = postgres ? 'postgres' : 'mysql';
  const port = info.port || (postgres ? '5432' : '3306');
  const cred = encodeURIComponent(info.user) + (info.password ? `:${encodeURIComponent(info.password)}` : '');
  const dsn = `${scheme}://${cred}@${info.host}:${port}/${info.dbname}${postgres ? '?sslmode=disable' : ''}`;
  const sites = join(dir, 'config', 'sites');
  const secret = `waymark-e2e-${randomBytes(16).toString('hex')}`;

  const bin = binary(); // built once, before anything is set up
  const work = mkdtempSync(join(tmpdir(), 'waymark-e2e-typo3real-'));
  const db = `sqlite:${join(work, 'waymark.db')}`;
  const cleanups = []; // run in reverse by stop()
  const cleanup = async () => {
    const errs = [];
    for (const fn of cleanups.reverse()) {
      try { await fn(); } catch (err) { errs.push(err.message); }
    }
    cleanups.length = 0;
    if (existsSync(work)) rmSync(work, { recursive: true, force: true });
    if (errs.length) throw new Error(`stopping Waymark beside TYPO3:\n${errs.join('\n')}`);
  };

  let output = '';
  let phpLog = '';
  try {
    // Waymark's part: the offline demo model for TYPO3's group Editor, with the process "SEO optimieren".
    const fixture = join(work, 'waymark-typo3.json');
    writeFileSync(fixture, JSON.stringify({
      configurations: [{
        uid: 1, identifier: 'demo', name: 'Demo model (offline)', active: true, groups: [info.editorGroup],
        provider: { type: 'demo' }, contextWindow: 32000, maxOutputTokens: 1024, requireSecondApprover: false, privacy: 'metadata',
        systemPrompt: "You are Waymark's editorial assistant. Propose exactly one change per turn; never write without the editor's approval.",
      }],
      skillSources: [{ uid: 1, type: 'backend', title: 'E2E', trustLevel: 'first_party' }],
      skills: [{ uid: 1, source: 1, identifier: 'seo-optimieren', enabled: true, markdown: seoSkill }],
      tools: [{ name: 'highlight_record', enabled: true }],
      approvals: [{ skill: 1, digest: 'current', approvedBy: info.admin }],
      attachments: [{ configuration: 1, skill: 1, loadMode: 'always' }],
    }, null, 2));
    try {
      execFileSync(bin, ['import', '--db', db, '--typo3', dsn, '--typo3-sites', sites, fixture], { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      throw new Error(`waymark import --typo3: ${err.message}\n${err.stdout || ''}${err.stderr || ''}`);
    }

    // What the backend keeps of the editor's work (the page module's language, the page tree's state):
    // as it was before, once php -S has ended.
    cleanups.push(() => php(dir, `\\TYPO3\\CMS\\Core\\Utility\\GeneralUtility::makeInstance(\\TYPO3\\CMS\\Core\\Database\\ConnectionPool::class)
      ->getConnectionByName('Default')->update('be_users', ['uc' => base64_decode('${info.editorUc}')], ['uid' => ${info.editor}]);`));

    // The editor works live (an earlier test may have left her in a workspace): restored by stop().
    if (info.editorWorkspace !== 0) {
      php(dir, `t3_dh(['be_users' => [${info.editor} => ['workspace_id' => 0]]]);`);
      cleanups.push(() => php(dir, `t3_dh(['be_users' => [${info.editor} => ['workspace_id' => ${info.editorWorkspace}]]]);`));
    }

    // TYPO3's module sends the editor to this Waymark: waymarkUrl before php -S starts, restored by stop().
    const wport = await freePort();
    const url = `http://127.0.0.1:${wport}`;
    setExtensionConfiguration(dir, { ...(info.extension || {}), waymarkUrl: url, secret: '' });
    cleanups.push(() => setExtensionConfiguration(dir, info.extension || { waymarkUrl: '', secret: '' }));

    // TYPO3, in a process group of its own (php -S forks its workers).
    const tport = await freePort();
    const base = `http://127.0.0.1:${tport}/`;
    const t3 = spawn('php', ['-d', 'opcache.enable_cli=1', '-S', `127.0.0.1:${tport}`, '-t', 'public'], {
      cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WAYMARK_BRIDGE_SECRET: secret, PHP_CLI_SERVER_WORKERS: '4', TYPO3_CONTEXT: 'Development' },
    });
    const t3exited = new Promise((r) => t3.once('exit', r));
    t3.stdout.on('data', (c) => { phpLog = (phpLog + c).slice(-20000); });
    t3.stderr.on('data', (c) => { phpLog = (phpLog + c).slice(-20000); });
    cleanups.push(async () => {
      if (t3.exitCode === null && t3.signalCode === null) {
        try { process.kill(-t3.pid, 'SIGKILL'); } catch { /* gone */ }
        await t3exited;
      }
    });
    const deadline = Date.now() + 30000;
    for (;;) {
      try {
        const r = await fetch(`${base}typo3/login`);
        await r.arrayBuffer();
        break;
      } catch { /* not yet */ }
      if (Date.now() > deadline) throw new Error(`php -S ${base} does not answer:\n${phpLog}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    // Waymark beside it, with the bridge (serve pings the extension before it serves).
    const child = spawn(bin, ['serve', '--addr', `127.0.0.1:${wport}`, '--db', db, '--typo3', dsn, '--typo3-sites', sites,
      '--typo3-bridge', base, '--workers', '1'], {
      cwd: work, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WAYMARK_TYPO3_BRIDGE_SECRET: secret },
    });
    const exited = new Promise((r) => child.once('exit', r));
    cleanups.push(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      let timer;
      const stopped = await Promise.race([exited.then(() => true), new Promise((r) => { timer = setTimeout(() => r(false), 10000); })]);
      clearTimeout(timer);
      if (!stopped) {
        child.kill('SIGKILL');
        await exited;
      }
    });
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`waymark serve --typo3-bridge printed no URL within ${timeoutMs} ms:\n${output}`)), timeoutMs);
      const onData = (chunk) => {
        output += chunk;
        for (const line of output.split('\n')) {
          try {
            const rec = JSON.parse(line);
            if (rec.msg === 'waymark serving' && rec.url) { clearTimeout(timer); resolve(); return; }
          } catch { /* not a JSON line */ }
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`waymark serve --typo3-bridge exited with ${code}:\n${output}`)); });
    });
    await ready(url, timeoutMs, () => `waymark serve at ${url} not ready:\n${output}`);

    return {
      url,
      typo3: { base, dir, dsn, editorGroup: info.editorGroup, editor: info.editor },
      output: () => output,
      phpLog: () => phpLog,
      api: (token, method, path, body) => api(url, token, method, path, body),
      // sql runs a query on TYPO3's database through TYPO3's connection and returns the rows.
      sql: (query) => JSON.parse(php(dir, `echo json_encode(\\TYPO3\\CMS\\Core\\Utility\\GeneralUtility::makeInstance(\\TYPO3\\CMS\\Core\\Database\\ConnectionPool::class)
        ->getConnectionByName('Default')->fetchAllAssociative(${JSON.stringify(query).replace(/\$/g, '\\$')}));`)),
      stop: cleanup,
    };
  } catch (err) {
    await cleanup().catch((e) => { err.message += `\n${e.message}`; });
    throw err;
  }
}
