// Waymark beside a real TYPO3 13.4 with the Waymark extension (the bridge,
// docs/typo3-bridge.md): the installation made by TYPO3's own installer
// (WAYMARK_TEST_TYPO3_MARIADB, from .ci/typo3.sh), served by `php -S`, and
// `waymark serve --typo3 … --typo3-bridge …` beside it. In Chromium the
// editor signs in through TYPO3's own backend login form, opens the page
// module for "About us", presses its "Waymark" button and lands in
// Waymark's chat with the page chosen — never seeing Waymark's login form.
// The tour's card says the change lands live in TYPO3; Waymark's own login
// page points to TYPO3 and refuses passwords.
import { test } from 'node:test';
import { realTYPO3, startBesideRealTYPO3, typo3Logins } from '../lib/typo3real.js';
import { Session } from '../lib/browser.js';
import { expect } from '../lib/expect.js';
import { axeViolations, describe } from '../lib/axe.js';
import { card, tourHeader } from '../lib/chat.js';

// ms since t0, for the report of where the time goes.
function stopwatch() {
  const t0 = Date.now();
  const laps = [];
  return {
    lap(what) { laps.push(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`); },
    toString() { return laps.join(', '); },
  };
}

test("beside TYPO3 with the extension: an editor signs in through TYPO3's backend and opens Waymark from the module", { timeout: 300000 }, async (t) => {
  const dir = realTYPO3(t);
  if (!dir) return;
  const clock = stopwatch();
  const server = await startBesideRealTYPO3(dir);
  clock.lap('TYPO3 and Waymark up');
  const base = server.typo3.base;
  const s = new Session(server, 'typo3 bridge enter', { origins: [base] });
  try {
    const page = await s.user('editor');
    const waymark = new URL(server.url).origin;
    // Every document the window loads from Waymark, in order: the login form must never be one.
    const visited = [];
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame() && f.url().startsWith(waymark)) visited.push(new URL(f.url()).pathname + new URL(f.url()).search);
    });
    const description = server.sql('SELECT description FROM pages WHERE uid = 2')[0].description;

    // TYPO3's own login form.
    await page.goto(`${base}typo3/login`);
    await page.getByLabel('Username', { exact: true }).fill(typo3Logins.editor.username);
    await page.getByLabel('Password', { exact: true }).fill(typo3Logins.editor.password);
    await page.locator('#t3-login-submit').click();
    await page.waitForURL(/\/typo3\/main/, { timeout: 30000 });
    clock.lap('signed in to TYPO3');

    // The page module ("Page"), "About us" (uid 2) chosen in the page tree, and the module's "Waymark" button.
    await page.locator('[data-modulemenu-identifier="web_layout"]').first().click();
    const tree = page.getByRole('tree').first();
    await expect(tree.getByRole('treeitem', { name: 'Nordlicht Digital' }), { timeout: 30000 }).toBeVisible();
    await tree.getByRole('treeitem', { name: 'Nordlicht Digital' }).click();
    if (!(await tree.getByRole('treeitem', { name: 'About us' }).isVisible())) await page.keyboard.press('ArrowRight'); // expands the focused node
    await tree.getByRole('treeitem', { name: 'About us' }).click();
    const module = page.frameLocator('#typo3-contentIframe');
    await expect(module.getByText('Path: /Nordlicht Digital/'), { timeout: 30000 }).toBeVisible();
    // The page in English (the page module keeps the language last shown: another test may have left German).
    await module.getByRole('button', { name: 'Language' }).click();
    await module.locator('.dropdown-menu a.dropdown-item', { hasText: 'English' }).click();
    await expect(module.getByRole('heading', { name: 'About us', exact: true }), { timeout: 30000 }).toBeVisible();
    const button = module.locator('a[href*="/typo3/module/web/waymark"]');
    await expect(button, { timeout: 30000 }).toBeVisible();
    await expect(button).toContainText('Waymark');
    // The module web_waymark for page 2 in language 0 (waits for the page module shown in English).
    await expect(button).toHaveAttribute('href', /^(?=.*\/typo3\/module\/web\/waymark\?)(?=.*[?&]id=2(&|$))(?=.*[?&]language=0(&|$))/);
    await s.shot(page, 'typo3-page-module');
    clock.lap("the page module's Waymark button");
    await button.click();

    // The module sends the whole window to Waymark's /typo3/enter, which moves on to the chat.
    await page.waitForURL((u) => u.origin === waymark && u.pathname === '/chat', { timeout: 30000 });
    clock.lap('in Waymark');
    const landed = new URL(page.url());
    if (landed.searchParams.get('page') !== '2' || landed.searchParams.get('language') !== '0') {
      throw new Error(`landed on ${page.url()}, want /chat?page=2&language=0`);
    }
    if (!visited.some((p) => p.startsWith('/typo3/enter?ticket='))) throw new Error(`the window never went through /typo3/enter: ${visited.join(' → ')}`);
    const logins = visited.filter((p) => p.startsWith('/login'));
    if (logins.length) throw new Error(`Waymark's login form was shown on the way: ${visited.join(' → ')}`);
    await expect(page.getByText('Signed in as editor')).toBeVisible();
    await expect(page.getByRole('heading', { name: 'Start a conversation' })).toBeVisible();
    await expect(page.getByRole('radio', { name: 'About us', exact: true })).toBeChecked();
    if ((await page.getByLabel('Language', { exact: true }).inputValue()) !== '0') throw new Error('the picker has another language than 0 (English)');
    await expect(page.locator('#login-form')).toHaveCount(0);
    clock.lap('picker checked');
    const all = await axeViolations(page, { all: true });
    if (all.length) throw new Error(`axe-core on the landing page (${page.url()}): ${all.length} violations:\n  ${describe(all)}`);
    await s.shot(page, 'typo3-bridge-landed');
    clock.lap('landing checked (axe-core)');

    // A tour of "About us": the card says where the change lands; nothing is written before the answer.
    // The SEO process, by its English name where the installation gives one, else by its own.
    const picker = page.getByLabel('Process', { exact: true });
    const seo = await picker.locator('option', { hasText: /^(Optimise SEO|SEO optimieren)$/ }).first().getAttribute('value');
    await picker.selectOption(seo);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/chat\/\d+$/);
    await expect(tourHeader(page), { timeout: 30000 }).toContainText('About us · English');
    const c = card(page);
    await expect(c, { timeout: 30000 }).toBeVisible();
    await expect(c.locator('p.landing')).toContainText('Lands live in TYPO3 when you apply it.');
    if (await c.locator('p.landing.draft').count()) throw new Error('the landing line is marked as a draft for an editor working live');
    await expect(c.getByRole('button', { name: 'Apply', exact: true })).toBeVisible();
    await s.shot(page, 'typo3-bridge-card');
    // The card links to its record in TYPO3's editor: followed in this browser (signed in to TYPO3), FormEngine
    // shows page 2 with the field the card is about.
    const edit = c.getByRole('link', { name: "Open the record in TYPO3's editor" });
    await expect(edit).toHaveAttribute('target', '_blank');
    const editor = await page.context().newPage();
    await editor.goto(await edit.getAttribute('href'));
    // TYPO3 13 opens a deep link inside its backend frame: FormEngine in the content iframe
    const form = editor.frameLocator('#typo3-contentIframe');
    await expect(form.getByRole('heading', { name: 'Edit Page "About us"' }), { timeout: 30000 }).toBeVisible();
    await expect(form.locator('[name="data[pages][2][description]"]')).toHaveCount(1);
    await s.shot(editor, 'typo3-bridge-formengine');
    await editor.close();
    clock.lap("the card's link opens TYPO3's editor");
    const now = server.sql('SELECT description FROM pages WHERE uid = 2')[0].description;
    if (now !== description) throw new Error(`TYPO3's pages:2 description changed before any answer: ${JSON.stringify(now)}, was ${JSON.stringify(description)}`);
    clock.lap('card with its landing line');

    // Waymark's login page, in a browser not signed in: it points to TYPO3, and a password opens nothing.
    const anon = await s.user('anonymous');
    clock.lap('second browser');
    await anon.goto(`${server.url}/login`);
    await expect(anon.getByText('Editors open Waymark from the TYPO3 backend: module “Waymark”, or the “Waymark” button in the page module.')).toBeVisible();
    const open = anon.getByRole('link', { name: 'Open the TYPO3 backend' });
    await expect(open).toBeVisible();
    const backend = new URL(await open.getAttribute('href'), server.url);
    if (backend.origin !== new URL(base).origin || !backend.pathname.startsWith('/typo3')) throw new Error(`"Open the TYPO3 backend" links to ${backend}, want ${base}typo3/…`);
    clock.lap('login page shown');
    await anon.getByLabel('Username').fill(typo3Logins.editor.username);
    await anon.getByLabel('Password').fill(typo3Logins.editor.password);
    await anon.getByRole('button', { name: 'Log in' }).click();
    await expect(anon.getByRole('alert')).toContainText('signing in with a password is switched off');
    await expect(anon.getByText('Signed in as editor')).toHaveCount(0);
    await s.shot(anon, 'typo3-bridge-login-page');
    clock.lap('login page');

    s.check();
    console.log(`timings: ${clock}`);
  } catch (err) {
    for (const p of s.pages) {
      if (!p.isClosed()) await s.shot(p, `failure-${p.label}`).catch(() => {});
    }
    err.message += `\n--- timings: ${clock}`;
    const out = server.output();
    if (out) err.message += `\n--- waymark serve output (last lines) ---\n${out.split('\n').slice(-30).join('\n')}`;
    const log = server.phpLog();
    if (log) err.message += `\n--- php -S (last lines) ---\n${log.split('\n').slice(-15).join('\n')}`;
    throw err;
  } finally {
    await s.close();
    await server.stop();
  }
});
