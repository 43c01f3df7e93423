// Browsers for the tests: Debian's chromium driven by playwright-core, one
// fresh profile per user. Every page is watched: a console error, an uncaught
// exception or a request to any host but the server under test fails the test.
import { chromium } from 'playwright-core';
import { mkdtempSync, mkdirSync, rmSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const outputRoot = process.env.E2E_OUTPUT || join(dirname(fileURLToPath(import.meta.url)), '..', 'test-output');

const chromiumArgs = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

// slug makes a test name a directory name.
export function slug(s) {
  return s.toLowerCase().replace(/[^a-z0-9äöüß]+/g, '-').replace(/^-|-$/g, '').slice(0, 80);
}

// Session is one test's browsers against one server. options.origins are
// more origins the browsers may ask (a TYPO3 backend beside Waymark).
export class Session {
  constructor(server, name, { origins = [] } = {}) {
    this.server = server;
    this.origin = new URL(server.url).origin;
    this.origins = new Set([this.origin, ...origins.map((o) => new URL(o).origin)]);
    this.dir = join(outputRoot, slug(name));
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
    this.problems = [];
    this.contexts = [];
    this.pages = [];
    this.shots = 0;
    this.diagnostics = [];
  }

  // onFailure adds a function whose answer is printed when the test fails.
  onFailure(fn) { this.diagnostics.push(fn); }

  // user opens a fresh browser profile and a page in it; options.viewport
  // ({ width, height }) sizes its window (a phone: 390×844).
  // options.timezoneId is the browser's time zone (the machine's when unset).
  async user(label, { viewport = { width: 1400, height: 900 }, locale = 'en-US', timezoneId } = {}) {
    const profile = mkdtempSync(join(tmpdir(), 'waymark-e2e-profile-'));
    const ctx = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: chromiumArgs,
      viewport,
      locale,
      ...(timezoneId ? { timezoneId } : {}),
    });
    ctx.profile = profile;
    this.contexts.push(ctx);
    // Requests to any other host are refused and recorded; the server's own pass untouched.
    const foreign = (u) => u.protocol !== 'data:' && u.protocol !== 'blob:' && !this.origins.has(u.origin);
    await ctx.route(foreign, (route) => {
      this.problems.push(`${label}: request to another host: ${route.request().url()}`);
      return route.abort('blockedbyclient');
    });
    const watch = (page) => {
      page.label = label;
      this.pages.push(page);
      page.on('console', (m) => {
        if (m.type() === 'error') this.problems.push(`${label}: console error on ${page.url()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => this.problems.push(`${label}: uncaught ${e.message} on ${page.url()}`));
    };
    ctx.on('page', watch);
    const page = ctx.pages()[0] || await ctx.newPage();
    if (!this.pages.includes(page)) watch(page);
    return page;
  }

  // shot saves a screenshot of page into the test's output directory. The
  // caret is left alone ('initial'): hiding it leaves style="" on inputs,
  // which htmx's attribute settling copies onto a swapped-in element of the
  // same id — an inline style the page's CSP refuses (a console error).
  //
  // A page with parts the browser renders only near the screen
  // (content-visibility: auto, the review list's cards) is shot through a
  // window as tall as the page, as a person scrolling through it sees every
  // part; a full-page shot through the ordinary window leaves them blank.
  async shot(page, name) {
    this.shots += 1;
    const file = join(this.dir, `${String(this.shots).padStart(2, '0')}-${slug(name)}.png`);
    const size = page.viewportSize();
    const height = await page.evaluate(() => ([...document.querySelectorAll('body *')]
      .some((e) => getComputedStyle(e).contentVisibility === 'auto') ? document.documentElement.scrollHeight : 0));
    if (size && height > size.height) {
      await page.setViewportSize({ width: size.width, height: Math.min(height, 16000) });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    }
    try {
      await page.screenshot({ path: file, fullPage: true, caret: 'initial' });
    } finally {
      if (size && height > size.height) await page.setViewportSize(size);
    }
    return file;
  }

  // shotOf saves a screenshot of one element (a locator).
  async shotOf(locator, name) {
    this.shots += 1;
    const file = join(this.dir, `${String(this.shots).padStart(2, '0')}-${slug(name)}.png`);
    await locator.screenshot({ path: file, caret: 'initial' });
    return file;
  }

  // check fails when any page logged an error or asked another host.
  check() {
    if (this.problems.length) throw new Error(`the browser saw problems:\n  ${this.problems.join('\n  ')}`);
  }

  async close() {
    for (const ctx of this.contexts) {
      await ctx.close().catch(() => {});
      rmSync(ctx.profile, { recursive: true, force: true });
    }
  }
}

// speed prints a measured figure and appends it to test-output/speed.txt.
export function speed(what, value, unit, limit) {
  const ok = limit === undefined || value <= limit;
  const line = `speed: ${what}: ${value.toFixed(1)} ${unit}${limit === undefined ? '' : ` (limit ${limit} ${unit}${ok ? '' : ', EXCEEDED'})`}`;
  console.log(line);
  mkdirSync(outputRoot, { recursive: true });
  appendFileSync(join(outputRoot, 'speed.txt'), `${new Date().toISOString()} ${line}\n`);
  return ok;
}
