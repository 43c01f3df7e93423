// Steps of the chat screens shared by the tests, in the words the editor sees.
import { expect, until } from './expect.js';
import { logins } from './server.js';

// startTour opens the page picker, chooses page, language and process and starts.
export async function startTour(s, page, { pageTitle, language, process }) {
  await page.goto(`${s.server.url}/chat`);
  await expect(page.getByRole('heading', { name: 'Unterhaltung beginnen' })).toBeVisible();
  await page.getByRole('radio', { name: pageTitle, exact: true }).check();
  await page.getByLabel('Sprache', { exact: true }).selectOption({ label: language });
  if (process) await page.getByLabel('Prozess', { exact: true }).selectOption({ label: process });
  await page.getByRole('button', { name: 'Starten' }).click();
  await page.waitForURL(/\/chat\/\d+$/);
  return conversationId(page);
}

// openSlashMenu types "/" in the message box and resolves once the process
// menu is open. A "/" typed while the conversation region is still being
// swapped in goes to the box the swap replaces: then the box is emptied and
// "/" typed again, as an editor would.
export async function openSlashMenu(page) {
  const input = page.getByRole('combobox', { name: /^(Nachricht|Message)$/ });
  const list = page.getByRole('listbox', { name: /^(Prozesse|Processes)$/ });
  let typed = 0;
  await until(page, async () => {
    if (await list.isVisible()) return true;
    if (Date.now() - typed > 300) { // no menu 300 ms after the last "/": type it again
      await input.fill('');
      await input.focus();
      await page.keyboard.type('/');
      typed = Date.now();
    }
    return false;
  }, 'the process menu to open after "/"');
  return list;
}

export function conversationId(page) {
  return Number(new URL(page.url()).pathname.split('/').pop());
}

// tourHeader is the heading "<Seite> · <Sprache> · Punkt n von m".
export function tourHeader(page) {
  return page.getByRole('heading', { level: 2 }).filter({ hasText: ' · ' }).first();
}

// card is the proposal card: the article in the chat (the preview beside it
// holds an article of its own, the page).
export function card(page) {
  return page.getByRole('region', { name: /^(KI-Chat|Chat)$/ }).getByRole('article').first();
}

export function preview(page) {
  return page.getByRole('complementary', { name: 'Seitenvorschau' });
}

// conversation reads the conversation through the JSON API as the editor sees it.
export async function conversation(s, id, who = 'erika') {
  return s.server.api(logins[who].token, 'GET', `/api/conversations/${id}`);
}

// proposed is the text the waiting card proposes (from the API, the same view the UI renders).
export async function proposed(s, id, who = 'erika') {
  const c = await conversation(s, id, who);
  if (!c.card) throw new Error(`no card waiting: ${JSON.stringify(c.status)}`);
  return c.card.calls[0].preview[0].proposed;
}

// watchText records, in the page, the wall-clock time at which text first
// appears in the document; seenAt reads it.
export async function watchText(page, key, text) {
  const re = text instanceof RegExp ? text.source : text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await page.evaluate(([key, re]) => {
    window.__seen = window.__seen || {};
    const check = () => {
      if (!window.__seen[key] && new RegExp(re).test(document.body.innerText)) window.__seen[key] = Date.now();
    };
    new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true });
    check();
  }, [key, re]);
}

export async function seenAt(page, key) {
  return until(page, () => page.evaluate((k) => (window.__seen || {})[k], key), `text ${key} to be seen`);
}

// answer clicks one of the card's answers, checking that the four answers
// are disabled while it is in flight: the request is held until they are.
export async function answer(page, name) {
  let release, passed;
  const held = new Promise((r) => { release = r; });
  const done = new Promise((r) => { passed = r; });
  const handler = async (route) => { await held; await route.continue(); passed(); };
  await page.route('**/chat/*/answer', handler, { times: 1 });
  const buttons = await card(page).getByRole('button').elementHandles();
  await card(page).getByRole('button', { name, exact: true }).click();
  // Every answer of the clicked card is disabled (matches(':disabled') covers a
  // disabled fieldset) until the answer is back — unless a live update
  // already replaced the card.
  for (const b of buttons) {
    await until(page, () => b.evaluate((el) => !el.isConnected || el.matches(':disabled')), `the card's answers to be disabled while ${name} is in flight`);
  }
  release();
  await done;
}

// expectSummary waits for the finished tour's summary with its counts (German UI)
// and the header saying the tour is completed.
export async function expectSummary(page, lines) {
  await expect(page.getByRole('heading', { name: 'Zusammenfassung der Tour' })).toBeVisible();
  const summary = page.getByRole('region', { name: 'Zusammenfassung der Tour' });
  for (const l of lines) await expect(summary).toContainText(l);
  await expect(tourHeader(page)).toContainText('Abgeschlossen');
}
