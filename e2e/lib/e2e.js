// e2e wraps a node:test test: a fresh `waymark demo`, a Session of browsers
// against it, screenshots of every open page on failure, and the check that
// no page logged an error or asked another host.
import { test } from 'node:test';
import { startDemo, logins } from './server.js';
import { Session, speed } from './browser.js';
import { expect } from './expect.js';

export { expect, logins, speed };

// Known defects of the web UI (internal/web) seen by this suite, by name, for
// options.known below. None today: the lost live update during an in-flight
// POST and the slash menu's console error are fixed, and every test counts.
export const defects = {};

//
// options.demoArgs are more options of `waymark demo` (a slow model).
// options.known names a known defect of another part that makes the test
// fail today: the test still runs and reports, as TODO, so the suite stays
// green until the defect is fixed; E2E_STRICT=1 makes every test count.
export function e2e(name, fn, options = {}) {
  const { known, demoArgs, ...rest } = options;
  const todo = known && !process.env.E2E_STRICT ? `known defect: ${known}` : undefined;
  test(name, { timeout: 180000, todo, ...rest }, async (t) => {
    const server = await startDemo({ args: demoArgs });
    const s = new Session(server, name);
    try {
      await fn({ s, server, t });
      s.check();
    } catch (err) {
      for (const page of s.pages) {
        if (!page.isClosed()) await s.shot(page, `failure-${page.label}`).catch(() => {});
      }
      for (const d of s.diagnostics) {
        err.message += `\n--- ${await Promise.resolve().then(d).catch((e) => `diagnostic failed: ${e.message}`)}`;
      }
      const out = server.output();
      if (out) err.message += `\n--- waymark demo output (last lines) ---\n${out.split('\n').slice(-30).join('\n')}`;
      throw err;
    } finally {
      await s.close();
      await server.stop();
    }
  });
}

// login signs in through the login form and waits for the signed-in header.
export async function login(s, page, who, { lang = 'de' } = {}) {
  const u = logins[who];
  await page.goto(`${s.server.url}/login`);
  await page.getByLabel(lang === 'de' ? /Benutzername|Username/ : 'Username').fill(u.username);
  await page.getByLabel(/Passwort|Password/).fill(u.password);
  await page.getByRole('button', { name: /Anmelden|Log in/ }).click();
  await expect(page.getByText(lang === 'de' ? `Angemeldet als ${u.username}` : `Signed in as ${u.username}`)).toBeVisible();
}

// firstPaint is the page's first contentful paint in ms after navigation start.
export async function firstPaint(page) {
  return page.evaluate(() => new Promise((resolve) => {
    const done = () => {
      const e = performance.getEntriesByName('first-contentful-paint')[0] || performance.getEntriesByName('first-paint')[0];
      if (e) { resolve(e.startTime); return true; }
      return false;
    };
    if (done()) return;
    new PerformanceObserver(() => done()).observe({ type: 'paint', buffered: true });
  }));
}

// serverTime is the navigation's time from request sent to first byte, in ms.
export async function serverTime(page) {
  return page.evaluate(() => {
    const n = performance.getEntriesByType('navigation')[0];
    return n.responseStart - n.requestStart;
  });
}
