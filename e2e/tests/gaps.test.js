// Gaps of "chats that know their page" and "a model failure you can retry":
// a free chat names its page when asked; a dashboard link starts the tour
// of its process on its page in its language; a failing model reads as a
// sentence with "Erneut versuchen", and the retry answers.
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { e2e, expect, login } from '../lib/e2e.js';
import { binary } from '../lib/server.js';
import { startTour, tourHeader, card, conversation, conversationId } from '../lib/chat.js';

e2e('a free chat that names its page', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English' });
  await page.getByRole('combobox', { name: 'Nachricht' }).fill('Welche Seite ist das?');
  await page.getByRole('button', { name: 'Senden' }).click();
  const chat = page.getByRole('region', { name: /^(KI-Chat|Chat)$/ });
  await expect(chat.getByText(/Wir sind auf der Seite „About“ \(uid \d+\) in English\./)).toBeVisible();
  if (await chat.getByText('Welche Seite soll ich bearbeiten?').count()) throw new Error('the assistant asked which page is meant');
  await s.shot(page, 'gaps-free-chat-names-its-page');
});

e2e('a dashboard link that starts a tour', async ({ s, server }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await page.getByRole('link', { name: 'Übersicht' }).click();
  const improve = page.getByRole('region', { name: 'Eine Seite verbessern' });
  const items = improve.getByRole('listitem');
  await expect(items.first()).toBeVisible();
  // A suggestion in German where there is one: the tour must keep the link's language.
  let item = items.first();
  for (const li of await items.all()) {
    if (/^\s*Deutsch:/.test(await li.locator('span.meta').textContent())) { item = li; break; }
  }
  const link = item.getByRole('link').first(); // the second starts a campaign from the page
  const title = (await link.textContent()).trim();
  const languageName = (await item.locator('span.meta').textContent()).trim().split(':')[0];
  const want = new URL(await link.getAttribute('href'), server.url).searchParams;
  await link.click();
  await expect(page.getByRole('heading', { name: 'Unterhaltung beginnen' })).toBeVisible();
  const process = page.getByLabel('Prozess', { exact: true });
  if (!(await process.inputValue())) throw new Error(`the link ${want} opened the picker with no process`);
  await page.getByRole('button', { name: 'Starten' }).click();
  await page.waitForURL(/\/chat\/\d+$/);
  await expect(tourHeader(page)).toContainText(new RegExp(`${title} · ${languageName} · Punkt 1 von \\d+`));
  await expect(card(page)).toBeVisible();
  const c = await conversation(s, conversationId(page));
  const got = JSON.stringify(c);
  for (const [k, v] of [['page', want.get('page')], ['language', want.get('language')]]) {
    if (!new RegExp(`"${k}":${v}\\b`).test(got)) throw new Error(`the tour's ${k} is not the link's ${v}: ${got.slice(0, 400)}`);
  }
  await s.shot(page, 'gaps-dashboard-link-starts-a-tour');
});

// modelServer is a small OpenAI-compatible chat-completions server: while
// failing is set it answers every request with a server error, then a reply.
async function modelServer() {
  const m = { failing: true, requests: 0 };
  m.server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      m.requests++;
      if (m.failing) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the model is overloaded', type: 'server_error' } }));
        return;
      }
      const reply = 'Gern, jetzt klappt es wieder.';
      if (JSON.parse(body).stream) { // the runtime streams when the UI shows text live
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        const chunk = (delta, finish, usage) => `data: ${JSON.stringify({ id: `c${m.requests}`, object: 'chat.completion.chunk', created: 0, model: 'm',
          choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
        res.write(chunk({ role: 'assistant', content: '' }, null));
        for (const w of reply.split(/(?<= )/)) res.write(chunk({ content: w }, null));
        res.write(chunk({}, 'stop', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }));
        res.end('data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({
        id: `c${m.requests}`, object: 'chat.completion', created: 0, model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }));
    });
  });
  await new Promise((r) => m.server.listen(0, '127.0.0.1', r));
  m.url = `http://127.0.0.1:${m.server.address().port}/v1`;
  return m;
}

e2e('a model failure reads as a sentence with Erneut versuchen, and the retry answers', async ({ s, server, t }) => {
  const model = await modelServer();
  t.after(() => model.server.close());
  // The demo's configuration talks to the model server instead of the offline model.
  const dir = mkdtempSync(join(tmpdir(), 'waymark-e2e-model-'));
  const fixture = join(dir, 'model.json');
  writeFileSync(fixture, JSON.stringify({ configurations: [{
    uid: 1, identifier: 'demo', name: 'Model under test', active: true, groups: [1, 2, 3],
    provider: { type: 'openai', baseUrl: model.url, apiKey: 'test-key', model: 'm' },
    contextWindow: 32000, maxOutputTokens: 1024, requireSecondApprover: false, privacy: 'metadata',
    systemPrompt: "You are Waymark's editorial assistant.",
  }] }));
  execFileSync(binary(), ['import', '--db', `sqlite:${server.db}`, fixture], { cwd: dirname(server.db) });
  rmSync(dir, { recursive: true, force: true });

  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English' });
  await page.getByRole('combobox', { name: 'Nachricht' }).fill('Was kannst du?');
  await page.getByRole('button', { name: 'Senden' }).click();
  const retry = page.getByRole('button', { name: 'Erneut versuchen' });
  await expect(retry).toBeVisible();
  const chat = page.getByRole('region', { name: /^(KI-Chat|Chat)$/ });
  const text = await chat.innerText();
  if (/\(\w+_\w+\)|provider_failed/.test(text)) throw new Error(`the failure reads as a code, not a sentence:\n${text}`);
  if (model.requests === 0) throw new Error('the model server was never asked');
  // The sentence is said once (the alert beside the retry), not also as a transcript line above it.
  const sentence = (await page.getByRole('alert').filter({ hasText: 'Sprachmodell' }).innerText()).trim();
  const times = text.split(sentence).length - 1;
  if (times !== 1) throw new Error(`the failure's sentence "${sentence}" is shown ${times} times:\n${text}`);
  await s.shot(page, 'gaps-model-failure');
  model.failing = false;
  await retry.click();
  await expect(chat.getByText('Gern, jetzt klappt es wieder.')).toBeVisible();
  await expect(retry).toHaveCount(0);
  await s.shot(page, 'gaps-model-failure-retried');
});

e2e('a card withdrawn by a message does not simply come back the same', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  const id = await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  await expect(card(page)).toBeVisible();
  const before = (await conversation(s, id)).card.calls;
  await page.getByRole('combobox', { name: 'Nachricht' }).fill('Warum schlägst du das vor?');
  await page.getByRole('button', { name: 'Senden' }).click();
  await expect(page.getByText('Vorschlag zurückgezogen: deine Nachricht geht vor.')).toBeVisible();
  await expect(card(page)).toBeVisible();
  const after = (await conversation(s, id)).card.calls;
  const same = (a, b) => JSON.stringify(a.map((c) => [c.tool, c.target, c.preview])) === JSON.stringify(b.map((c) => [c.tool, c.target, c.preview]));
  if (same(before, after)) throw new Error(`the withdrawn card came back unchanged: ${JSON.stringify(after).slice(0, 400)}`);
  await s.shot(page, 'gaps-withdrawn-card-not-repeated');
});
