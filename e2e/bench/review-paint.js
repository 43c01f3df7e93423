// The browser's paint of the campaign review list (/campaigns/{id}, 20 cards
// a page): the product's figure "the review list of 1,000 cards painted in
// ≤ 300 ms per page of the list". Not a test (npm test runs tests/ only):
//
//   cd e2e && WAYMARK_BIN=/path/to/waymark node bench/review-paint.js
//
// It starts `waymark demo` (the binary of WAYMARK_BIN, else one built from
// this checkout) or uses the demo at WAYMARK_URL; as erika it starts through
// the API a campaign of the demo's process "SEO optimieren" over the demo's
// guide branch (root page 1000, depth 1, FILTER: descriptionMissing by
// default, "" for every page; 8 pages at once) and waits until its cards
// stop coming. Then, signed in as erika in Chromium, it opens each page of
// the review list REPEATS times (default 5) and prints per list page the
// median and slowest of: navigation start → first contentful paint, →
// load event end, and the server's part of the same request (request sent →
// first byte of the response, from PerformanceNavigationTiming), with the
// cards shown. PAGES (default 2000) sizes the demo's guide branch
// (`waymark demo --demo-pages`; half of its pages lack a description, so
// 2000 pages make 1,000 cards with the default filter), and the demo runs
// with an open-runs cap above it (--max-open-runs), since every card waits
// as one of erika's open runs. Before the measured openings it waits SETTLE
// seconds (default 10) after the cards are there and opens the list once.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemo, api, logins } from '../lib/server.js';

const repeats = Number(process.env.REPEATS || 5);
const pages = Number(process.env.PAGES || 2000);
const filter = process.env.FILTER ?? 'descriptionMissing';
const perPage = 20; // the web list's page size (internal/web)

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const ms = (x) => `${x.toFixed(0)} ms`;

async function main() {
  if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`REPEATS=${process.env.REPEATS}: want a whole number of 1 or more`);
  if (!Number.isInteger(pages) || pages < 1 || pages > 5000) throw new Error(`PAGES=${process.env.PAGES}: want a whole number of 1 to 5000`);
  const server = process.env.WAYMARK_URL ? { url: process.env.WAYMARK_URL.replace(/\/$/, ''), stop: async () => {} }
    : await startDemo({ timeoutMs: 120000, args: ['--demo-pages', String(pages), '--max-open-runs', String(pages + 100)] });
  const profile = mkdtempSync(join(tmpdir(), 'waymark-bench-profile-'));
  let ctx;
  try {
    const token = logins.erika.token;
    const body = { process: 'seo-optimieren', rootPage: 1000, depth: 1, concurrency: 8 };
    if (filter) body.filter = filter;
    const t0 = Date.now();
    let c = await api(server.url, token, 'POST', '/api/campaigns', body);
    // The cards are there when the campaign is done, or waits for answers
    // (the cap of open runs) with no tour running, or nothing changed for 10 s.
    let last = '', since = Date.now();
    for (;;) {
      const k = c.counts;
      if (c.state === 'done' || (c.waitsForAnswers && k.running === 0)) break;
      const now = JSON.stringify(k);
      if (now !== last) { last = now; since = Date.now(); } else if (Date.now() - since > 10000) break;
      if (Date.now() - t0 > 15 * 60000) throw new Error(`the campaign did not reach its cards in 15 minutes: ${JSON.stringify(c)}`);
      await new Promise((r) => setTimeout(r, 500));
      c = await api(server.url, token, 'GET', `/api/campaigns/${c.id}`);
    }
    const { total } = await api(server.url, token, 'GET', `/api/campaigns/${c.id}/cards?limit=1`);
    console.log(`campaign ${c.id} over ${c.counts.total} pages: ${total} cards in ${((Date.now() - t0) / 1000).toFixed(1)} s (state ${c.state}${c.waitsForAnswers ? ', waits for answers' : ''})`);
    if (total === 0) throw new Error('the campaign has no cards');

    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1400, height: 900 }, locale: 'de-DE',
    });
    const page = ctx.pages()[0] || await ctx.newPage();
    await page.goto(`${server.url}/login`);
    await page.getByLabel(/Benutzername|Username/).fill(logins.erika.username);
    await page.getByLabel(/Passwort|Password/).fill(logins.erika.password);
    await page.getByRole('button', { name: /Anmelden|Log in/ }).click();
    await page.getByText(/Angemeldet als erika|Signed in as erika/).waitFor();

    // The cards are reviewed once the campaign is done: the server's own
    // after-work (its log copied back, the queue's cleanup) is given
    // SETTLE seconds (default 10), and the fresh browser opens the list once
    // before the measured openings — its first opening of a page of this
    // kind, printed apart.
    await new Promise((r) => setTimeout(r, 1000 * Number(process.env.SETTLE ?? 10)));
    await page.goto(`${server.url}/campaigns/${c.id}`, { waitUntil: 'load' });
    const first = await page.evaluate(() => new Promise((resolve) => {
      const n = performance.getEntriesByType('navigation')[0];
      const tick = () => {
        const p = performance.getEntriesByName('first-contentful-paint')[0];
        if (p && n.loadEventEnd > 0) resolve(p.startTime - n.startTime); else setTimeout(tick, 10);
      };
      tick();
    }));
    console.log(`the browser's first opening of the list (not counted below): first contentful paint ${ms(first)}`);
    const rows = [];
    const all = { fcp: [], load: [], server: [] };
    for (let off = 0; off < total; off += perPage) {
      const m = { fcp: [], load: [], server: [] };
      let shown = 0;
      for (let i = 0; i < repeats; i++) {
        await page.goto(`${server.url}/campaigns/${c.id}${off ? `?offset=${off}` : ''}`, { waitUntil: 'load' });
        const t = await page.evaluate(() => new Promise((resolve) => {
          const n = performance.getEntriesByType('navigation')[0];
          const done = () => {
            const p = performance.getEntriesByName('first-contentful-paint')[0];
            if (!p || n.loadEventEnd === 0) return false;
            resolve({ fcp: p.startTime - n.startTime, load: n.loadEventEnd - n.startTime, server: n.responseStart - n.requestStart });
            return true;
          };
          if (!done()) {
            new PerformanceObserver(() => done()).observe({ type: 'paint', buffered: true });
            const tick = () => { if (!done()) setTimeout(tick, 10); };
            tick();
          }
        }));
        shown = await page.locator('article.review-card').count();
        for (const k of Object.keys(m)) { m[k].push(t[k]); all[k].push(t[k]); }
      }
      rows.push({ offset: off, cards: shown, m });
    }
    console.log(`review list: ${total} cards, ${rows.length} pages of ${perPage}, each opened ${repeats} times; median / slowest`);
    console.log('offset  cards  first contentful paint   load event          server (request → first byte)');
    for (const r of rows) {
      const f = (k) => `${ms(median(r.m[k]))} / ${ms(Math.max(...r.m[k]))}`.padEnd(20);
      console.log(`${String(r.offset).padStart(6)}  ${String(r.cards).padStart(5)}  ${f('fcp')}     ${f('load')}${f('server')}`);
    }
    const f = (k) => `${ms(median(all[k]))} / ${ms(Math.max(...all[k]))}`;
    console.log(`all pages: first contentful paint ${f('fcp')}, load event ${f('load')}, server ${f('server')}`);
  } finally {
    if (ctx) await ctx.close();
    rmSync(profile, { recursive: true, force: true });
    await server.stop();
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
