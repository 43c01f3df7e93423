// Accessibility of every screen state: axe-core (from npm) reports 0
// critical and 0 serious violations on each, on a phone (390×844) and a
// laptop (1280×800), in German and in English; every state is screenshotted
// (test-output/), and none scrolls sideways. And the smaller things editors ran into: focus after the
// last card, after ending a tour and after a release; the "/" menu with no
// match; an unknown conversation; the own language setting.
import { readFileSync } from 'node:fs';
import { e2e, expect, login } from '../lib/e2e.js';
import { until } from '../lib/expect.js';
import { axeViolations, describe } from '../lib/axe.js';
import { startTour, tourHeader, card, preview, answer, conversationId } from '../lib/chat.js';

const sizes = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 800 } };
const adminRoutes = JSON.parse(readFileSync(new URL('../admin-routes.json', import.meta.url)));

// Audit collects the violations of every state and fails once, at the end,
// with all of them (not one round at a time).
class Audit {
  constructor(s, size) { this.s = s; this.size = size; this.failures = []; this.states = 0; }
  async check(page, state) {
    const name = `${this.size}-${state}`;
    const vs = await axeViolations(page);
    this.states++;
    if (vs.length) this.failures.push(`${name} (${page.url()}):\n  ${describe(vs)}`);
    // And no screen scrolls sideways (a phone shows every control without panning).
    const [sw, w] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if (sw > w) this.failures.push(`${name} (${page.url()}): the page is ${sw} px wide in a ${w} px window`);
    await this.s.shot(page, name);
  }
  done() {
    console.log(`axe-core: ${this.states} screen states at ${this.size}, ${this.failures.length} with critical/serious violations or sideways scrolling`);
    if (this.failures.length) throw new Error(`axe-core found critical/serious violations (or the page scrolls sideways) in ${this.failures.length} of ${this.states} states:\n${this.failures.join('\n')}`);
  }
}

// A 404 answer is what an unknown conversation is; its console line is expected.
function allow404(s) {
  s.problems = s.problems.filter((p) => !/Failed to load resource: the server responded with a status of 404/.test(p));
}

for (const size of Object.keys(sizes)) {
  e2e(`axe-core: the editor's screens in German at ${size} size have 0 critical and 0 serious violations`, async ({ s, server }) => {
    const a = new Audit(s, `${size}-de`);
    const page = await s.user('erika', { viewport: sizes[size], locale: 'de-DE' });
    await page.goto(`${server.url}/login`);
    await expect(page.getByRole('heading', { name: 'Bei Waymark anmelden' })).toBeVisible();
    await a.check(page, 'login');
    await page.getByLabel('Benutzername').fill('erika');
    await page.getByLabel('Passwort').fill('falsch-falsch');
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await expect(page.getByRole('alert')).toBeVisible();
    await a.check(page, 'login-wrong-password');
    await login(s, page, 'erika');
    await page.goto(`${server.url}/dashboard`);
    await expect(page.getByRole('heading', { name: 'Deine Website' })).toBeVisible();
    await a.check(page, 'dashboard');
    await page.goto(`${server.url}/chat`);
    await expect(page.getByRole('heading', { name: 'Unterhaltung beginnen' })).toBeVisible();
    await a.check(page, 'picker');
    await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
    await expect(card(page).getByRole('button', { name: 'Übernehmen' })).toBeVisible();
    await a.check(page, 'card');
    if (size === 'phone') {
      await page.getByRole('button', { name: 'Seitenvorschau' }).click();
      await expect(preview(page)).toBeVisible();
      await a.check(page, 'preview-open');
      await page.getByRole('button', { name: 'Unterhaltungen' }).click();
      await expect(page.getByRole('navigation', { name: 'Unterhaltungen' })).toBeVisible();
      await a.check(page, 'list-open');
      await page.getByRole('button', { name: 'Unterhaltungen' }).click();
    }
    await card(page).getByRole('group').getByRole('button').first().focus();
    await card(page).getByText('Technische Details').click();
    await a.check(page, 'card-technical-details');
    await answer(page, 'Übernehmen');
    await expect(tourHeader(page)).toContainText('Punkt 2 von 4');
    await a.check(page, 'after-apply');
    const box = page.getByRole('combobox', { name: 'Nachricht' });
    await box.fill('/');
    await expect(page.getByRole('listbox', { name: 'Prozesse' })).toBeVisible();
    await a.check(page, 'slash-menu');
    await box.fill('/zzz');
    await expect(page.getByText('Kein Prozess passt.')).toBeVisible();
    await a.check(page, 'slash-no-match');
    await box.fill('');
    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Tour beenden' }).click();
    await expect(tourHeader(page)).toContainText('Tour beendet');
    await a.check(page, 'tour-ended');
    await page.goto(`${server.url}/settings`);
    await expect(page.getByRole('heading', { name: 'Deine Einstellungen' })).toBeVisible();
    await a.check(page, 'settings');
    await page.goto(`${server.url}/chat/99999`);
    await expect(page.getByRole('heading', { name: 'Unterhaltung nicht gefunden' })).toBeVisible();
    allow404(s);
    await a.check(page, 'conversation-not-found');
    a.done();
  });

  e2e(`axe-core: the approver's and the administrator's screens in English at ${size} size have 0 critical and 0 serious violations`, async ({ s, server }) => {
    const a = new Audit(s, `${size}-en`);
    const paula = await s.user('paula', { viewport: sizes[size] });
    await paula.goto(`${server.url}/login`);
    await a.check(paula, 'login');
    await login(s, paula, 'paula', { lang: 'en' });
    await paula.goto(`${server.url}/inbox`);
    await expect(paula.getByText('Nothing is waiting for you.')).toBeVisible();
    await a.check(paula, 'inbox-empty');
    await paula.goto(`${server.url}/dashboard`);
    await a.check(paula, 'dashboard');
    await paula.goto(`${server.url}/chat`);
    await expect(paula.getByRole('heading', { name: 'Start a conversation' })).toBeVisible();
    await a.check(paula, 'picker');
    await paula.goto(`${server.url}/settings`);
    await expect(paula.getByRole('heading', { name: 'Your settings' })).toBeVisible();
    await a.check(paula, 'settings');

    const admin = await s.user('admin', { viewport: sizes[size] });
    await login(s, admin, 'admin', { lang: 'en' });
    const seen = new Set();
    for (const r of adminRoutes) {
      if (r.method !== 'GET') continue;
      const path = r.path.replace(/\{[^}]+\}/g, '1');
      if (seen.has(path)) continue;
      seen.add(path);
      const resp = await admin.goto(`${server.url}${path}`);
      if (!resp.ok()) { allow404(s); continue; }
      await a.check(admin, `admin${path.replace(/\//g, '-')}`);
    }
    // A new token with its copy button.
    await admin.goto(`${server.url}/admin/users/2`);
    await admin.getByLabel('Label').fill('a11y');
    await admin.getByRole('button', { name: 'Create token' }).click();
    await expect(admin.getByRole('button', { name: 'Copy' })).toBeVisible();
    await a.check(admin, 'admin-new-token');
    // Copy puts the token on the clipboard and says so.
    await admin.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url).origin });
    const token = await admin.getByLabel('New token').inputValue();
    await admin.getByRole('button', { name: 'Copy' }).click();
    await expect(admin.getByRole('status').filter({ hasText: 'Copied.' })).toBeVisible();
    const copied = await admin.evaluate(() => navigator.clipboard.readText());
    if (copied !== token || !token) throw new Error(`the clipboard holds ${JSON.stringify(copied)}, want the new token`);
    a.done();
  }, { timeout: 300000 });
}

e2e('focus after the last card, after ending a tour and in the transcript never falls to the page body', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  await expect(tourHeader(page)).toContainText('Punkt 1 von 4');
  const focused = () => page.evaluate(() => {
    const a = document.activeElement;
    return a && a !== document.body ? `${a.tagName.toLowerCase()}${a.className ? '.' + a.className : ''}` : 'body';
  });
  // Ending a tour: the × was focused; afterwards the transcript is.
  const first = conversationId(page);
  await expect(card(page).getByRole('button', { name: 'Übernehmen' })).toBeVisible();
  // The confirmation is the sign that Enter reached the ×. Just after the page
  // opened, the stream's first refresh renders the region anew; the focus
  // stays on the new × (layout.js), but a key pressed in the very moment of
  // that swap can miss it: then Enter is pressed once more, and said so.
  for (let tries = 1; ; tries++) {
    // Accepted as it comes: an open dialog holds the key press until it is answered.
    const confirmed = page.waitForEvent('dialog', { timeout: 3000 }).then((d) => d.accept()).then(() => true, () => false);
    await page.getByRole('button', { name: 'Tour beenden' }).focus();
    await page.keyboard.press('Enter');
    if (await confirmed) break;
    if (tries === 3) throw new Error('Enter on the focused × of the tour asked for no confirmation, three times');
    console.log(`# Enter on the × of the tour asked for no confirmation (try ${tries}); pressed again`);
  }
  await expect(tourHeader(page)).toContainText('Tour beendet');
  await until(page, async () => (await focused()) !== 'body', 'the focus to leave the page body after ending the tour');
  await expect(page.getByRole('list', { name: 'Nachrichten' })).toBeFocused();

  // A new tour to its end: after the last card the focus is on the transcript, not the body.
  await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  if (conversationId(page) === first) throw new Error('no new conversation');
  for (let i = 1; i <= 4; i++) {
    await expect(card(page).getByRole('button', { name: 'Übernehmen' })).toBeVisible();
    await answer(page, 'Übernehmen');
    if (i < 4) await expect(tourHeader(page)).toContainText(`Punkt ${i + 1} von 4`);
  }
  await expect(tourHeader(page)).toContainText('Abgeschlossen');
  await until(page, async () => (await focused()) !== 'body', 'the focus to leave the page body after the last card');
  await expect(page.getByRole('list', { name: 'Nachrichten' })).toBeFocused();
});

e2e('after a release in the inbox the focus is on the inbox\'s status, not the page body', async ({ s, server }) => {
  // paula on a phone: the inbox with a waiting card is audited at 390×844, erika's four-eyes card at 1280×800.
  const paula = await s.user('paula', { viewport: sizes.phone });
  await login(s, paula, 'paula', { lang: 'en' });
  await paula.goto(`${server.url}/inbox`);
  await expect(paula.getByText('Nothing is waiting for you.')).toBeVisible();
  const erika = await s.user('erika');
  await login(s, erika, 'erika');
  await erika.goto(`${server.url}/chat`);
  await erika.getByRole('radio', { name: 'About', exact: true }).check();
  await erika.getByLabel('Sprache', { exact: true }).selectOption({ label: 'English' });
  const assistant = erika.getByLabel('Assistent', { exact: true });
  const fourEyes = (await assistant.getByRole('option').allTextContents()).find((o) => /four eyes|vier Augen|zweite Person/i.test(o));
  await assistant.selectOption({ label: fourEyes });
  await erika.getByRole('button', { name: 'Starten' }).click();
  await erika.waitForURL(/\/chat\/\d+$/);
  await erika.getByRole('combobox', { name: 'Nachricht' }).fill('Bitte verbessere Seite 2.');
  await erika.getByRole('button', { name: 'Senden' }).click();
  await expect(paula.getByRole('button', { name: 'Release' })).toBeVisible();
  await expect(card(erika).getByText('Eine zweite Person muss diese Änderung freigeben.')).toBeVisible();
  const a = new Audit(s, 'four-eyes');
  await a.check(paula, 'phone-en-inbox-card');
  await erika.setViewportSize(sizes.laptop);
  await a.check(erika, 'laptop-de-four-eyes-card');
  a.done();
  await paula.getByRole('button', { name: 'Release' }).focus();
  await paula.keyboard.press('Enter');
  await expect(paula.getByText('Released.')).toBeVisible();
  // The focus goes to the next waiting card's heading, or to the status line when none waits.
  await until(paula, () => paula.evaluate(() => {
    const a = document.activeElement;
    return a && (a.id === 'inbox-status' || (a.matches('.card h3') && a.closest('#inbox')));
  }), 'the focus on the inbox status or the next card');
  await expect(paula.getByRole('status').filter({ hasText: 'Released.' })).toBeVisible();
});

e2e('the "/" menu with no matching process says so, and an unknown conversation is a page with a way back', async ({ s, server }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English' });
  const box = page.getByRole('combobox', { name: 'Nachricht' });
  await box.fill('/');
  await expect(page.getByRole('option', { name: /SEO optimieren/ })).toBeVisible();
  await expect(page.getByText('Kein Prozess passt.')).toBeHidden();
  await box.fill('/gibtsnicht');
  await expect(page.getByText('Kein Prozess passt.')).toBeVisible();
  await expect(page.getByRole('listbox', { name: 'Prozesse' })).toBeHidden();
  await s.shot(page, 'slash-no-match');
  await box.fill('/SEO');
  await expect(page.getByText('Kein Prozess passt.')).toBeHidden();
  await expect(page.getByRole('option', { name: /SEO optimieren/ })).toBeVisible();
  await box.press('Escape');

  const resp = await page.goto(`${server.url}/chat/424242`);
  if (resp.status() !== 404) throw new Error(`unknown conversation answered ${resp.status()}, want 404`);
  allow404(s);
  await expect(page.getByRole('heading', { name: 'Unterhaltung nicht gefunden', level: 1 })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Hauptnavigation' })).toBeVisible();
  await s.shot(page, 'conversation-not-found');
  await page.getByRole('link', { name: 'Zurück zu deinen Unterhaltungen' }).click();
  await expect(page.getByRole('heading', { name: 'Unterhaltung beginnen' })).toBeVisible();
});

e2e('an editor switches her UI language in her settings and the chat speaks it', async ({ s, server }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await page.getByRole('link', { name: 'Einstellungen' }).click();
  await expect(page.getByRole('heading', { name: 'Deine Einstellungen' })).toBeVisible();
  await page.getByLabel('Sprache der Oberfläche und des Assistenten').selectOption('en');
  await page.getByRole('button', { name: 'Speichern' }).click();
  await expect(page.getByRole('heading', { name: 'Your settings' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Saved. The interface and the assistant now use English.' })).toBeVisible();
  const chosen = await page.getByLabel('Language of the interface and the assistant').evaluate((el) => el.value);
  if (chosen !== 'en') throw new Error(`the select shows ${chosen} after saving English`);
  await page.goto(`${server.url}/chat`);
  await expect(page.getByText('Signed in as erika')).toBeVisible();
  await s.shot(page, 'chat-in-english');

  // The editor's chat in English at both sizes: axe-core and screenshots.
  const startEn = async (p) => {
    await p.goto(`${server.url}/chat`);
    await p.getByRole('radio', { name: 'About', exact: true }).check();
    await p.getByLabel('Language', { exact: true }).selectOption({ label: 'English' });
    await p.getByLabel('Process', { exact: true }).selectOption({ label: 'Optimise SEO' }); // the process's English name
    await p.getByRole('button', { name: 'Start' }).click();
    await p.waitForURL(/\/chat\/\d+$/);
    await expect(p.getByRole('region', { name: /^(AI chat|Chat)$/ }).getByRole('article').getByRole('button', { name: 'Apply' })).toBeVisible();
  };
  for (const size of Object.keys(sizes)) {
    const a = new Audit(s, `${size}-en-editor`);
    const p = size === 'laptop' ? page : await s.user('erika-phone', { viewport: sizes[size] });
    if (size === 'laptop') await p.setViewportSize(sizes.laptop);
    else await login(s, p, 'erika', { lang: 'en' });
    await startEn(p);
    await a.check(p, 'card');
    if (size === 'phone') {
      await p.getByRole('button', { name: 'Page preview' }).click();
      await a.check(p, 'preview-open');
    }
    a.done();
  }
});
