// Live updates of the chat (screens 2–5) as editors rely on them: every
// answer brings the next card without a reload, an action that does not get
// through says so and keeps what was typed, an ended session leads back to
// the conversation after logging in again, the model's reply streams in and
// Stopp ends a slow one; Senden is disabled while a turn runs.
import { e2e, expect, login, speed } from '../lib/e2e.js';
import { until } from '../lib/expect.js';
import { startTour, conversationId, card, conversation } from '../lib/chat.js';

// allow drops the browser problems a test provokes on purpose (a refused or
// failed request the browser logs as a console error), and only those.
function allow(s, ...patterns) {
  s.problems = s.problems.filter((p) => !patterns.some((re) => re.test(p)));
}

// A run takes 20 model rounds at most (the demo configuration's limit), so
// the 200 answers are "Andere Variante" on the cards of tours started one
// after the other, 12 answers each. Every other answer's own response is
// held back 300 ms on its way to the page (a slow network): the live update
// with the next card overtakes it, and the older response must not put the
// region back to "processing".

e2e('the answer loop 200 times: every answer brings the next card, without a reload', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  let id = 0;
  const tour = async () => {
    id = await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
    await expect(card(page).getByRole('button', { name: 'Andere Variante', exact: true })).toBeVisible();
    await page.evaluate(() => { window.__noReload = true; });
  };
  s.onFailure(async () => {
    const c = await conversation(s, id);
    return `conversation ${id}: the server holds: status ${c.status} ${c.error || ''}, card ${c.card ? c.card.turnDigest : null}, updatedAt ${c.updatedAt}; ` +
      `the page shows data-status=${await page.locator('#conversation').getAttribute('data-status')} ` +
      `data-card=${await page.locator('#conversation').getAttribute('data-card')} data-version=${await page.locator('#conversation').getAttribute('data-version')}`;
  });
  let answers = 0, delivered = null;
  await page.route('**/chat/*/answer', async (route) => {
    answers++;
    if (answers % 2 === 1) { delivered = null; await route.continue(); return; }
    let done;
    delivered = new Promise((r) => { done = r; });
    const response = await route.fetch();
    await new Promise((r) => setTimeout(r, 300));
    await route.fulfill({ response });
    done();
  });
  const times = [];
  let toured = -1; // the answer whose tour began: a retried answer begins none
  for (let i = 0; i < 200; i++) {
    if (i % 12 === 0 && toured !== i) {
      if (i > 0 && !(await page.evaluate(() => window.__noReload))) throw new Error(`the page reloaded during tour ${i / 12}`);
      await tour();
      toured = i;
    }
    // In the page: click "Andere Variante" and wait for a new card (another
    // turn digest) in the region, at most 5 s — a stalled region is a failure.
    const r = await page.evaluate(() => new Promise((resolve) => {
      const region = () => document.getElementById('conversation');
      const before = region().dataset.card;
      const button = Array.from(region().querySelectorAll('.card button')).find((b) => b.textContent.trim() === 'Andere Variante');
      if (!before || !button || button.disabled) { resolve({ error: `no card to answer (data-card=${before})` }); return; }
      // htmx takes a swapped-in form over when the swap settles (~20 ms on);
      // a click before that would submit it natively, as no editor can.
      const ready = button.form && button.form['htmx-internal-data'] && button.form['htmx-internal-data'].initHash;
      if (!ready) { resolve({ retry: true }); return; }
      const t0 = performance.now();
      let done = false;
      const check = () => {
        const el = region();
        if (done || !el) return;
        const now = el.dataset.card;
        if (now && now !== before && el.querySelector('.card h3')) {
          done = true; obs.disconnect(); clearTimeout(timer);
          resolve({ ms: performance.now() - t0 });
        }
      };
      const obs = new MutationObserver(check);
      obs.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-card'] });
      const timer = setTimeout(() => {
        if (done) return;
        done = true; obs.disconnect();
        const el = region();
        resolve({ error: `stalled: data-status=${el && el.dataset.status} data-card=${el && el.dataset.card} after 5 s` });
      }, 5000);
      button.click();
    }));
    // Not taken over yet: the same answer again, a frame later.
    if (r.retry) { i--; await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok()))); continue; }
    if (r.error) throw new Error(`answer ${i + 1} of 200: ${r.error}`);
    times.push(r.ms);
    // Once the held-back response is in, the region still shows the card the
    // server holds: an older response never overwrites a newer state.
    if (delivered) {
      await delivered;
      const want = (await conversation(s, id)).card;
      await until(page, async () => want && (await page.locator('#conversation').getAttribute('data-card')) === want.turnDigest &&
        (await page.locator('#conversation').getAttribute('data-status')) === 'awaiting_approval',
      `answer ${i + 1}: the region to keep showing the card the server holds (a stall)`, 3000);
    }
  }
  if (!(await page.evaluate(() => window.__noReload))) throw new Error('the page reloaded during the loop');
  times.sort((a, b) => a - b);
  const median = times[100];
  await s.shot(page, 'after-200-answers');
  const ok = speed('answer → next card (median of 200)', median, 'ms', 150);
  speed('answer → next card (slowest of 200)', times[199], 'ms');
  if (!ok) throw new Error(`answer → next card median ${median.toFixed(1)} ms (limit 150 ms)`);
}, { timeout: 420000 });

e2e('offline: Senden while the server cannot be reached says so and keeps the text', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English' });
  const box = page.getByRole('combobox', { name: 'Nachricht' });
  await box.fill('Bitte kürzer formulieren.');
  await page.context().setOffline(true);
  await page.getByRole('button', { name: 'Senden' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'Keine Verbindung zum Server' })).toBeVisible();
  if (await box.inputValue() !== 'Bitte kürzer formulieren.') throw new Error(`the typed text was lost: ${await box.inputValue()}`);
  await s.shot(page, 'offline-message');
  // Back online: the stream reconnects, the message clears, Senden works.
  await page.context().setOffline(false);
  await until(page, async () => !(await page.locator('#connection').isVisible()), 'the offline message to clear after reconnecting');
  await page.getByRole('button', { name: 'Senden' }).click();
  await expect(page.locator('#conversation .message.user').filter({ hasText: 'Bitte kürzer formulieren.' })).toBeVisible();
  await until(page, async () => (await box.inputValue()) === '', 'the box to be emptied once the message was taken');
  // htmx logs the failed request itself (afterRequest, sendError): provoked here.
  allow(s, /ERR_INTERNET_DISCONNECTED/, /ERR_NETWORK_CHANGED/, /htmx:sendError/, /htmx:afterRequest/);
});

e2e('expired session: the answer is not lost on a login page, and logging in returns to the conversation', async ({ s, server }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  const id = await startTour(s, page, { pageTitle: 'About', language: 'English' });
  // The session ends in another tab.
  const other = await page.context().newPage();
  await other.goto(`${server.url}/chat`);
  await other.getByRole('button', { name: 'Abmelden' }).click();
  await expect(other.getByRole('heading', { name: 'Log in to Waymark' })).toBeVisible();
  await other.close();

  const box = page.getByRole('combobox', { name: 'Nachricht' });
  await box.fill('Was fehlt der Seite noch?');
  // Senden answers 401 — unless the live stream learnt of the ended session
  // first: then Senden is disabled already (cutoff.test.js).
  await page.getByRole('button', { name: 'Senden' }).click({ timeout: 2000 }).catch(() => {});
  const alert = page.getByRole('alert').filter({ hasText: 'Deine Sitzung ist abgelaufen' });
  await expect(alert).toBeVisible();
  if (!/\/chat\/\d+$/.test(page.url())) throw new Error(`the page left the conversation: ${page.url()}`);
  if (await box.inputValue() !== 'Was fehlt der Seite noch?') throw new Error(`the typed text was lost: ${await box.inputValue()}`);
  if ((await conversation(s, id)).messages.length !== 0) throw new Error('the message was recorded without a session');
  await s.shot(page, 'session-ended-message');

  // Log in again through the message's link: back to the conversation, the text still there.
  await alert.getByRole('link', { name: 'Neu anmelden und hierher zurückkehren' }).click();
  await page.getByLabel(/Benutzername|Username/).fill('erika');
  await page.getByLabel(/Passwort|Password/).fill('erika-demo-pass');
  await page.getByRole('button', { name: /Anmelden|Log in/ }).click();
  await page.waitForURL(new RegExp(`/chat/${id}$`));
  await until(page, async () => (await page.getByRole('combobox', { name: 'Nachricht' }).inputValue()) === 'Was fehlt der Seite noch?',
    'the typed text to be back in the box');
  await page.getByRole('button', { name: 'Senden' }).click();
  await expect(page.locator('#conversation .message.user').filter({ hasText: 'Was fehlt der Seite noch?' })).toBeVisible();
  if (conversationId(page) !== id) throw new Error('not the same conversation');
  allow(s, /status of 401/);
});

e2e('a slow model reply streams in, Senden is disabled meanwhile, and Stopp ends it', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  const id = await startTour(s, page, { pageTitle: 'About', language: 'English' });
  const box = page.getByRole('combobox', { name: 'Nachricht' });
  const send = page.getByRole('button', { name: 'Senden' });
  await box.fill('Was kannst du?');
  await send.click();
  // The reply comes word by word: a part of it is in the transcript while the model writes.
  const streaming = page.locator('#conversation .message.assistant.streaming');
  await expect(streaming).toBeVisible();
  const part = (await streaming.locator('.text').innerText()).trim();
  if (!part) throw new Error('the streamed reply is empty');
  await until(page, async () => (await streaming.locator('.text').innerText()).trim().length > part.length, 'more of the reply to stream in');
  if (!(await send.isDisabled())) throw new Error('Senden is enabled while a turn runs');
  // A second message typed meanwhile stays in the box.
  await box.fill('Und noch etwas.');
  await s.shot(page, 'streaming-reply');
  await page.getByRole('button', { name: 'Stopp' }).click();
  await expect(page.getByText('Angehalten. Die Antwort wurde abgebrochen')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Stopp' })).toBeHidden();
  await until(page, async () => !(await send.isDisabled()), 'Senden to be enabled once the turn was stopped');
  if (await box.inputValue() !== 'Und noch etwas.') throw new Error(`the second message was erased: ${await box.inputValue()}`);
  // The part that had streamed in stays, marked as stopped (stop.test.js).
  const c = await conversation(s, id);
  const stopped = c.messages.filter((m) => m.role === 'assistant' && m.content);
  if (c.status !== 'idle' || stopped.length !== 1 || stopped[0].notice !== 'stopped' || !stopped[0].content.startsWith(part)) {
    throw new Error(`after Stopp the conversation is ${c.status} with ${JSON.stringify(c.messages)}`);
  }
  await expect(streaming).toBeHidden();
  await s.shot(page, 'stopped-reply');
}, { demoArgs: ['--demo-pace', '250ms'] });
