// A small expect for playwright-core locators: every assertion waits for its
// condition up to a deadline (default 10 s) and never sleeps a fixed time.
export const defaultTimeout = Number(process.env.E2E_TIMEOUT_MS || 10000);

// until polls cond (async, truthy when met) once per animation frame of page.
export async function until(page, cond, what, timeout = defaultTimeout) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await cond();
      if (last) return last;
    } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r()))).catch(() => {});
  }
}

export function expect(locator, { timeout = defaultTimeout } = {}) {
  const page = locator.page();
  const name = String(locator);
  return {
    async toBeVisible() {
      await locator.first().waitFor({ state: 'visible', timeout }).catch((e) => { throw new Error(`${name} not visible: ${e.message.split('\n')[0]}`); });
    },
    async toBeHidden() {
      await locator.first().waitFor({ state: 'hidden', timeout }).catch((e) => { throw new Error(`${name} still visible: ${e.message.split('\n')[0]}`); });
    },
    async toContainText(text) {
      await until(page, async () => {
        const t = await locator.first().textContent({ timeout: 200 });
        return t !== null && (text instanceof RegExp ? text.test(t) : t.includes(text));
      }, `${name} to contain ${text}`, timeout);
    },
    async toHaveCount(n) {
      await until(page, async () => (await locator.count()) === n, `${name} to count ${n}`, timeout);
    },
    async toBeDisabled() {
      await until(page, () => locator.first().isDisabled({ timeout: 200 }), `${name} to be disabled`, timeout);
    },
    async toBeEnabled() {
      await until(page, () => locator.first().isEnabled({ timeout: 200 }), `${name} to be enabled`, timeout);
    },
    async toBeChecked() {
      await until(page, () => locator.first().isChecked({ timeout: 200 }), `${name} to be checked`, timeout);
    },
    // toBeScrolledIntoView: visible without scrolling, inside every scrolling
    // box around it (a list with max-height) and inside the window.
    async toBeScrolledIntoView() {
      await until(page, () => locator.first().evaluate((el) => {
        const r = el.getBoundingClientRect();
        if (r.height === 0 || r.top < 0 || r.bottom > window.innerHeight + 1) return false;
        for (let p = el.parentElement; p; p = p.parentElement) {
          const o = getComputedStyle(p).overflowY;
          if (o !== 'auto' && o !== 'scroll') continue;
          const b = p.getBoundingClientRect();
          if (r.top < b.top - 1 || r.bottom > b.bottom + 1) return false;
        }
        return true;
      }), `${name} to be scrolled into view`, timeout);
    },
    async toBeFocused() {
      await until(page, () => locator.first().evaluate((el) => el === document.activeElement), `${name} to be focused`, timeout);
    },
    async toHaveAttribute(attr, value) {
      await until(page, async () => {
        const v = await locator.first().getAttribute(attr, { timeout: 200 });
        return value instanceof RegExp ? value.test(v ?? '') : v === value;
      }, `${name} to have ${attr}=${value}`, timeout);
    },
  };
}
