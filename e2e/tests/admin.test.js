// Administration: the provider key is write-only,
// a disabled user's open chat is logged out on its next action, and a
// non-admin gets no admin navigation and 403 on every admin URL — the URLs
// of e2e/admin-routes.json, the list the Go side keeps equal to the mounted
// routes (internal/web TestTheSharedAdminRouteListIsEveryMountedAdminRoute).
import { readFileSync } from 'node:fs';
import { e2e, expect, login } from '../lib/e2e.js';
import { startTour } from '../lib/chat.js';
import { until } from '../lib/expect.js';

const adminRoutes = JSON.parse(readFileSync(new URL('../admin-routes.json', import.meta.url)));

e2e('a provider key entered once is never shown again', async ({ s, server }) => {
  const key = 'sk-e2e-entered-once-31415926';
  const admin = await s.user('admin');
  await login(s, admin, 'admin', { lang: 'en' });
  await admin.getByRole('link', { name: 'Administration' }).click();
  await admin.getByRole('link', { name: 'Configurations' }).click();
  await admin.getByRole('link', { name: 'Demo model (offline)' }).click();
  await expect(admin.getByText('No key is stored.')).toBeVisible();
  await admin.getByLabel('API key').fill(key);
  await s.shot(admin, 'configuration-key-typed');
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(admin.getByText('A key is stored.')).toBeVisible();
  const after = await admin.content();
  if (after.includes(key)) throw new Error('the page shows the key after saving');
  if (await admin.getByLabel('API key').inputValue() !== '') throw new Error('the key field is filled after saving');
  await s.shot(admin, 'configuration-saved');
  await admin.reload();
  await expect(admin.getByText('A key is stored.')).toBeVisible();
  if ((await admin.content()).includes(key)) throw new Error('the page shows the key after a reload');
  await admin.goto(`${server.url}/admin/configurations`);
  await expect(admin.getByRole('cell', { name: 'stored' })).toBeVisible();
  if ((await admin.content()).includes(key)) throw new Error('the list shows the key');
  // The connection test answers (the demo provider is offline: it answers locally).
  await admin.getByRole('link', { name: 'Demo model (offline)' }).click();
  await admin.getByRole('button', { name: 'Test connection' }).click();
  await expect(admin.locator('#probe').getByText(/Connected|provider/)).toBeVisible();
  if ((await admin.content()).includes(key)) throw new Error('the connection test shows the key');
  await s.shot(admin, 'configuration-test-connection');
  // Bad input: an invalid URL is refused at its field and nothing is saved.
  await admin.getByLabel('Provider').selectOption({ label: 'OpenAI-compatible' });
  await admin.getByLabel('Base URL').fill('not a url');
  await admin.getByLabel('Model').fill('gpt-x');
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin.getByText('Enter an http(s) address with a host')).toBeVisible();
  await expect(admin.getByLabel('Base URL')).toHaveAttribute('aria-invalid', 'true');
  await s.shot(admin, 'configuration-bad-url');
  await admin.reload();
  if (await admin.getByLabel('Base URL').inputValue() !== '') throw new Error('the refused URL was saved');
});

e2e('a disabled user\'s open chat page is logged out on its next action', async ({ s, server }) => {
  const erika = await s.user('erika');
  await login(s, erika, 'erika');
  await startTour(s, erika, { pageTitle: 'About', language: 'English' });
  const composer = erika.getByRole('combobox', { name: 'Nachricht' });
  await expect(composer).toBeVisible();

  const admin = await s.user('admin');
  await login(s, admin, 'admin', { lang: 'en' });
  await admin.goto(`${server.url}/admin/users`);
  await admin.getByRole('link', { name: 'erika', exact: true }).click();
  await expect(admin.getByText('This user is active.')).toBeVisible();
  // Disabling asks first: dismissed, nothing changes; accepted, the user is disabled.
  let asked = '';
  admin.once('dialog', (d) => { asked = d.message(); d.dismiss(); });
  await admin.getByRole('button', { name: 'Disable user' }).click();
  await until(admin, () => asked, 'the confirmation dialog');
  if (!/Disable this user\?/.test(asked)) throw new Error(`confirmation reads ${asked}`);
  await expect(admin.getByText('This user is active.')).toBeVisible();
  admin.once('dialog', (d) => d.accept());
  await admin.getByRole('button', { name: 'Disable user' }).click();
  await expect(admin.getByRole('status').filter({ hasText: 'Disabled.' })).toBeVisible();
  await expect(admin.getByRole('button', { name: 'Enable user' })).toBeVisible();
  await s.shot(admin, 'user-disabled');

  // erika's page is still open; her next action is refused (not recorded): the page says her
  // session ended, keeps her text, and its link leads to the login page.
  await composer.fill('Noch eine Frage.');
  // Senden answers 401 — unless the live stream learnt of it first: then
  // Senden is disabled already (cutoff.test.js).
  await erika.getByRole('button', { name: 'Senden' }).click({ timeout: 2000 }).catch(() => {});
  await expect(erika.getByRole('alert').filter({ hasText: 'Deine Sitzung ist abgelaufen.' })).toBeVisible();
  if (await composer.inputValue() !== 'Noch eine Frage.') throw new Error('the refused message was erased from the box');
  await s.shot(erika, 'disabled-user-logged-out');
  await erika.getByRole('link', { name: /Neu anmelden/ }).click();
  await erika.waitForURL(/\/login/);
  await expect(erika.getByRole('heading', { name: /Bei Waymark anmelden|Log in to Waymark/ })).toBeVisible();
  // Her open page's requests are refused from the disabling on (the action and an
  // EventSource that reconnects meanwhile log the 401): the stop this test asks
  // for. Only those answers, on her chat page, are let through.
  s.problems = s.problems.filter((p) => !/^erika: console error on \S+\/chat\/\d+: Failed to load resource: the server responded with a status of 401/.test(p));
}, { timeout: 300000 }); // two browsers and a chat: on a loaded machine over the default 180 s

e2e('a non-admin gets no admin navigation and 403 on every admin URL', async ({ s, server }) => {
  const erika = await s.user('erika');
  await login(s, erika, 'erika');
  await erika.goto(`${server.url}/chat`);
  await expect(erika.getByRole('navigation', { name: 'Hauptnavigation' })).toBeVisible();
  await expect(erika.getByRole('link', { name: 'Verwaltung' })).toHaveCount(0);
  const gets = adminRoutes.filter((r) => r.method === 'GET');
  if (gets.length < 10) throw new Error(`admin-routes.json lists only ${gets.length} GET routes`);
  for (const r of gets) {
    for (const id of ['1', '999']) {
      const url = `${server.url}${r.path.replace(/\{[a-z]+\}/g, id)}`;
      const res = await erika.goto(url);
      if (res.status() !== 403) throw new Error(`GET ${url} as erika = ${res.status()}, want 403`);
      await expect(erika.getByRole('heading', { name: 'Kein Zugriff' })).toBeVisible();
      await expect(erika.getByRole('link', { name: 'Verwaltung' })).toHaveCount(0);
    }
  }
  await s.shot(erika, 'non-admin-403');
  // Chromium logs every 403 document as a console error: these are the
  // answers this test asked for, and only these are let through.
  s.problems = s.problems.filter((p) => !/^erika: console error on \S+\/admin\S*: Failed to load resource: the server responded with a status of 403/.test(p));
  // The administrator, for contrast, has the navigation and the home.
  const admin = await s.user('admin');
  await login(s, admin, 'admin', { lang: 'en' });
  // An administrator lands on the administration after logging in.
  if (new URL(admin.url()).pathname !== '/admin') throw new Error(`after login the administrator is on ${admin.url()}, want /admin`);
  await admin.getByRole('link', { name: 'Administration' }).click();
  for (const name of ['Skills', 'Configurations', 'Users', 'Groups', 'Runs']) {
    await expect(admin.getByRole('navigation', { name: 'Administration screens' }).getByRole('link', { name, exact: true })).toBeVisible();
  }
  await s.shot(admin, 'admin-home');
});

e2e('an administrator finds an editor\'s waiting tour in the runs and ends its process', async ({ s, server }) => {
  const erika = await s.user('erika');
  await login(s, erika, 'erika');
  await startTour(s, erika, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  await expect(erika.getByRole('button', { name: 'Übernehmen' })).toBeVisible();

  const admin = await s.user('admin');
  await login(s, admin, 'admin', { lang: 'en' });
  await admin.goto(`${server.url}/admin/runs`);
  await admin.getByLabel('Started by').selectOption({ label: 'erika' });
  await admin.getByLabel('Status').selectOption({ label: 'waiting for approval' });
  await admin.getByRole('button', { name: 'Filter' }).click();
  await admin.waitForURL(/initiator=2/);
  const rows = admin.getByRole('table').getByRole('row');
  await expect(rows).toHaveCount(2); // the header and erika's waiting run
  await s.shot(admin, 'runs-filtered');
  await rows.nth(1).getByRole('link').click();
  await expect(admin.getByRole('heading', { name: /^Run / })).toBeVisible();
  await expect(admin.getByText(/holds the process/)).toBeVisible();
  await expect(admin.getByRole('heading', { name: 'Events' })).toBeVisible();
  await s.shot(admin, 'run-page');
  await admin.getByRole('button', { name: 'End process' }).click();
  await expect(admin.getByRole('status').filter({ hasText: 'The process was ended.' })).toBeVisible();
  await expect(admin.getByText('holds no process')).toBeVisible();
  await expect(admin.getByRole('button', { name: 'End process' })).toHaveCount(0);
  await s.shot(admin, 'run-process-ended');
}, { timeout: 300000 }); // a tour's start and two logins: on a loaded machine over the default 180 s
