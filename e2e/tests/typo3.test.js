// A whole tour in the browser as a TYPO3 user: Waymark beside the TYPO3
// demo database on MariaDB (`serve --typo3`); erika logs in with her TYPO3
// password and answers every card of the SEO tour of "About" — apply,
// another variant, skip, keep, apply. What she applied lands in TYPO3's
// pages and tt_content rows with their sys_history and sys_log entries and
// the page's entries of TYPO3's page cache gone; what she skipped, kept or
// only saw as a variant is unchanged in TYPO3.
import { test } from 'node:test';
import { startBesideTYPO3, mariadb } from '../lib/typo3.js';
import { Session } from '../lib/browser.js';
import { expect, login } from '../lib/e2e.js';
import { expectNoSeriousViolations } from '../lib/axe.js';
import { startTour, tourHeader, card, preview, conversation, proposed, answer, expectSummary } from '../lib/chat.js';

// reachable tells whether MariaDB answers; as the Go tests, a test without it
// is skipped, unless CI is set.
function reachable(t) {
  try {
    mariadb('SELECT 1');
    return true;
  } catch (err) {
    if (process.env.CI) throw new Error(`MariaDB is not reachable (CI is set: the test must run): ${err.message}`);
    t.skip(`MariaDB is not reachable with the mariadb client: ${err.message.split('\n')[0]}`);
    return false;
  }
}

// besideTYPO3 runs fn with Waymark beside a fresh TYPO3 demo database and a
// browser session, and checks the session's console after it; a failure
// carries screenshots and the server's last lines.
async function besideTYPO3(label, fn) {
  const server = await startBesideTYPO3();
  const s = new Session(server, label);
  try {
    await fn(server, s);
    s.check();
  } catch (err) {
    for (const p of s.pages) {
      if (!p.isClosed()) await s.shot(p, `failure-${p.label}`).catch(() => {});
    }
    const out = server.output();
    if (out) err.message += `\n--- waymark serve --typo3 output (last lines) ---\n${out.split('\n').slice(-30).join('\n')}`;
    throw err;
  } finally {
    await s.close();
    await server.stop();
  }
}

test('beside TYPO3: a TYPO3 editor answers a whole tour and what she applied lands in TYPO3', { timeout: 240000 }, async (t) => {
  if (!reachable(t)) return;
  await besideTYPO3('typo3 tour', async (server, s) => {
    const page = await s.user('erika');
    await login(s, page, 'erika'); // the TYPO3 password, checked against TYPO3's Argon2i hash
    const id = await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
    await expect(tourHeader(page)).toContainText('About · English · Punkt 1 von 4');
    await expect(card(page).getByRole('region', { name: 'Beschreibung' })).toContainText('Aktuell');
    const description = await proposed(s, id);
    await expect(card(page)).toContainText(description);
    if (server.typo3('SELECT description FROM pages WHERE uid = 2') === description) throw new Error('TYPO3 holds the proposal before it was applied');

    // TYPO3 has the published page in its page cache.
    server.typo3("INSERT INTO cache_pages (identifier, expires, content) VALUES ('e2e-about', 4102444800, 'cached About')");
    server.typo3("INSERT INTO cache_pages_tags (identifier, tag) VALUES ('e2e-about', 'pageId_2')");
    const before = {
      seoTitle: server.typo3('SELECT seo_title FROM pages WHERE uid = 2'),
      headers: server.typo3('SELECT uid, header FROM tt_content WHERE pid = 2 AND deleted = 0 ORDER BY uid'),
    };

    // Point 1, apply: the description is in TYPO3 at once, with history, log and the page cache flushed.
    await answer(page, 'Übernehmen');
    await expect(tourHeader(page)).toContainText('Punkt 2 von 4');
    await expect(page.getByText('Übernommen: Seite „About“ – Beschreibung')).toBeVisible();
    await expect(preview(page)).toContainText(description);
    await s.shot(page, 'typo3-tour-applied');
    const row = server.typo3('SELECT description FROM pages WHERE uid = 2');
    if (row !== description) throw new Error(`TYPO3 pages:2 description = ${JSON.stringify(row)}, want the applied ${JSON.stringify(description)}`);
    const hist = server.typo3("SELECT COUNT(*) FROM sys_history WHERE tablename = 'pages' AND recuid = 2 AND actiontype = 2 AND userid = 2");
    const log = server.typo3("SELECT COUNT(*) FROM sys_log WHERE tablename = 'pages' AND recuid = 2 AND userid = 2");
    if (hist !== '1' || log !== '1') throw new Error(`sys_history rows ${hist}, sys_log entries ${log}; want 1 and 1`);
    const cached = server.typo3("SELECT (SELECT COUNT(*) FROM cache_pages WHERE identifier = 'e2e-about') + (SELECT COUNT(*) FROM cache_pages_tags WHERE tag = 'pageId_2')");
    if (cached !== '0') throw new Error(`${cached} page cache rows of page 2 are left after the change; want none`);

    // Point 2, the SEO title: another variant, then skip — nothing of it reaches TYPO3.
    const first = await proposed(s, id);
    await answer(page, 'Andere Variante');
    await expect(page.getByText('Andere Variante angefragt')).toBeVisible();
    const deadline = Date.now() + 10000;
    let second = first;
    while (second === first) {
      if (Date.now() > deadline) throw new Error(`no other variant than ${first}`);
      await new Promise((r) => setTimeout(r, 20));
      const c = await conversation(s, id);
      if (c.card) second = c.card.calls[0].preview[0].proposed;
    }
    await expect(card(page)).toContainText(second);
    await expect(tourHeader(page)).toContainText('Punkt 2 von 4');
    await answer(page, 'Überspringen');
    await expect(tourHeader(page)).toContainText('Punkt 3 von 4');
    await expect(page.getByText('Übersprungen: Seite „About“ – SEO-Titel')).toBeVisible();

    // Point 3, keep; point 4, apply: the header of the "Team" element.
    await answer(page, 'Behalten');
    await expect(tourHeader(page)).toContainText('Punkt 4 von 4');
    const header = await proposed(s, id);
    await answer(page, 'Übernehmen');
    await expectSummary(page, ['2 übernommen', '1 übersprungen', '1 behalten']);
    await expect(page.getByText('Die Tour durch „About“ ist fertig: 4 Punkte.', { exact: false })).toBeVisible();
    await s.shot(page, 'typo3-tour-summary');

    // TYPO3 holds exactly what was applied.
    if (server.typo3('SELECT seo_title FROM pages WHERE uid = 2') !== before.seoTitle) throw new Error('the skipped SEO title changed in TYPO3');
    const team = server.typo3('SELECT header FROM tt_content WHERE uid = 112');
    if (team !== header) throw new Error(`TYPO3 tt_content:112 header = ${JSON.stringify(team)}, want the applied ${JSON.stringify(header)}`);
    const headers = server.typo3('SELECT uid, header FROM tt_content WHERE pid = 2 AND deleted = 0 ORDER BY uid');
    const want = before.headers.split('\n').map((l) => (l.startsWith('112\t') ? `112\t${header}` : l)).join('\n');
    if (headers !== want) throw new Error(`TYPO3 headers on About:\n${headers}\nwant only the applied one changed:\n${want}`);
    const contentHist = server.typo3("SELECT COUNT(*) FROM sys_history WHERE tablename = 'tt_content' AND recuid = 112 AND actiontype = 2 AND userid = 2");
    const all = server.typo3("SELECT COUNT(*) FROM sys_history WHERE userid = 2");
    if (contentHist !== '1' || all !== '2') throw new Error(`sys_history: ${contentHist} rows of tt_content:112, ${all} of erika in all; want 1 and 2`);
  });
});

// The administrator beside TYPO3: the users are TYPO3's, shown as such with
// no way to create or change them in Waymark; what Waymark allows a user (a
// grant) is set on the user's screen and holds at once.
test('beside TYPO3: an administrator sets what Waymark allows a TYPO3 user', { timeout: 180000 }, async (t) => {
  if (!reachable(t)) return;
  await besideTYPO3('typo3 admin', async (server, s) => {
    const page = await s.user('admin');
    await login(s, page, 'admin', { lang: 'en' }); // the TYPO3 password
    await page.goto(`${server.url}/admin/users`);
    await expect(page.getByText('Users come from TYPO3', { exact: false })).toBeVisible();
    await expect(page.getByRole('link', { name: 'New user' })).toHaveCount(0);
    await expectNoSeriousViolations(page, 'the users list beside TYPO3');
    await page.getByRole('link', { name: 'max', exact: true }).click();
    await expect(page.getByText('come from TYPO3 and are changed there', { exact: false })).toBeVisible();
    await expect(page.getByLabel('Username')).toHaveCount(0);
    await expectNoSeriousViolations(page, "max's screen beside TYPO3");
    await page.getByLabel('release changes (second person)').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Saved.')).toBeVisible();
    await expect(page.getByLabel('release changes (second person)')).toBeChecked();
    await s.shot(page, 'typo3-admin-user-saved');
    const grants = await server.api('demo-token-admin', 'GET', '/api/admin/users/3');
    if (JSON.stringify(grants.grants) !== '["approve"]') throw new Error(`max's grants = ${JSON.stringify(grants.grants)}, want ["approve"]`);
  });
});
