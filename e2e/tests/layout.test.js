// The responsive layout (screen 2 on a phone and on a laptop): on a narrow
// screen the conversation comes first and the conversation list and the
// preview open from buttons above it; the card is fully usable at 390 and
// at 360 px wide; on a wide screen the three columns sit side by side.
import { e2e, expect, login } from '../lib/e2e.js';
import { startTour, tourHeader, card, preview, answer } from '../lib/chat.js';

const phone = { width: 390, height: 844 };
const laptop = { width: 1280, height: 800 };

// noSidewaysScroll fails when the page is wider than the window.
async function noSidewaysScroll(page, what) {
  const [sw, w] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  if (sw > w) throw new Error(`${what}: the page is ${sw} px wide in a ${w} px window (it scrolls sideways)`);
}

// usable checks that every button of the card can be reached and clicked:
// after scrolling to it, it is visible, inside the window's width, at least
// 24 px high, and nothing covers its centre (playwright's trial click).
async function everyCardButtonUsable(page, width) {
  const buttons = card(page).getByRole('button');
  const n = await buttons.count();
  if (n < 4) throw new Error(`the card shows ${n} buttons, want 4`);
  for (let i = 0; i < n; i++) {
    const b = buttons.nth(i);
    await b.scrollIntoViewIfNeeded();
    const box = await b.boundingBox();
    const name = await b.textContent();
    if (!box) throw new Error(`card button ${name} has no box (hidden)`);
    if (box.x < 0 || box.x + box.width > width + 0.5) throw new Error(`card button ${name} lies outside the ${width} px window: x ${box.x}, width ${box.width}`);
    if (box.height < 24) throw new Error(`card button ${name} is ${box.height} px high`);
    await b.click({ trial: true, timeout: 5000 });
  }
}

e2e('on a phone (390×844) the conversation comes first, list and preview open from buttons, every card button is usable', async ({ s }) => {
  const page = await s.user('erika', { viewport: phone });
  await login(s, page, 'erika');
  await page.goto(`${s.server.url}/chat`);
  await expect(page.getByRole('heading', { name: 'Unterhaltung beginnen' })).toBeVisible();
  await noSidewaysScroll(page, 'the page picker at 390 px');
  await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  await expect(tourHeader(page)).toContainText('Punkt 1 von 4');
  await expect(card(page).getByRole('button', { name: 'Übernehmen' })).toBeVisible();
  await noSidewaysScroll(page, 'the chat with a card at 390 px');

  // The conversation first: list and preview are hidden behind two buttons.
  const listButton = page.getByRole('button', { name: 'Unterhaltungen' });
  const previewButton = page.getByRole('button', { name: 'Seitenvorschau' });
  await expect(listButton).toHaveAttribute('aria-expanded', 'false');
  await expect(previewButton).toHaveAttribute('aria-expanded', 'false');
  await expect(page.getByRole('navigation', { name: 'Unterhaltungen' })).toBeHidden();
  await expect(preview(page)).toBeHidden();
  const chatTop = await page.getByRole('region', { name: 'KI-Chat' }).evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
  if (chatTop > 250) throw new Error(`the conversation starts ${chatTop} px down, want it first (≤ 250 px)`);
  const chatWidth = await page.getByRole('region', { name: 'KI-Chat' }).evaluate((el) => el.getBoundingClientRect().width);
  if (chatWidth < 340) throw new Error(`the conversation is ${chatWidth} px wide at 390 px`);
  const applyTop = await card(page).getByRole('button', { name: 'Übernehmen' }).evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
  if (applyTop > 1200) throw new Error(`Übernehmen sits ${applyTop} px down`);
  await everyCardButtonUsable(page, phone.width);
  await s.shot(page, 'phone-card-de');

  // The preview opens above the conversation, takes the focus and closes again.
  await previewButton.click();
  await expect(previewButton).toHaveAttribute('aria-expanded', 'true');
  await expect(preview(page)).toBeVisible();
  await expect(preview(page).getByRole('heading', { name: 'Seitenvorschau' })).toBeFocused();
  await expect(preview(page).getByText('Hervorgehoben')).toBeVisible();
  await noSidewaysScroll(page, 'the open preview');
  await s.shot(page, 'phone-preview-open');
  // Opening the list closes the preview: one panel at a time.
  await listButton.click();
  await expect(page.getByRole('navigation', { name: 'Unterhaltungen' })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Unterhaltungen' }).getByRole('link', { name: /About/ })).toBeVisible();
  await expect(preview(page)).toBeHidden();
  await expect(previewButton).toHaveAttribute('aria-expanded', 'false');
  await s.shot(page, 'phone-list-open');
  await listButton.click();
  await expect(page.getByRole('navigation', { name: 'Unterhaltungen' })).toBeHidden();
  // Escape closes an open panel and hands the focus back to its button.
  for (const [button, panel] of [[previewButton, preview(page)], [listButton, page.getByRole('navigation', { name: 'Unterhaltungen' })]]) {
    await button.click();
    await expect(panel).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(panel).toBeHidden();
    await expect(button).toHaveAttribute('aria-expanded', 'false');
    await expect(button).toBeFocused();
  }

  // Every button on the screen is a touch target of at least 24×24 px (×
  // of the tour and of the process chip included).
  const small = await page.evaluate(() => Array.from(document.querySelectorAll('button, a.button, [role=option]'))
    .filter((b) => b.offsetParent !== null)
    .map((b) => { const r = b.getBoundingClientRect(); return { name: b.getAttribute('aria-label') || b.textContent.trim(), w: r.width, h: r.height }; })
    .filter((b) => b.w < 24 || b.h < 24));
  if (small.length) throw new Error(`touch targets under 24 px: ${JSON.stringify(small)}`);

  // The card's answer works by touch size: Übernehmen brings point 2.
  await answer(page, 'Übernehmen');
  await expect(tourHeader(page)).toContainText('Punkt 2 von 4');
  await expect(page.getByText('Übernommen: Seite „About“ – Beschreibung')).toBeVisible();
  await everyCardButtonUsable(page, phone.width);

  // 360 px: still one column, nothing sideways, every button usable.
  await page.setViewportSize({ width: 360, height: 740 });
  await noSidewaysScroll(page, 'the chat with a card at 360 px');
  await everyCardButtonUsable(page, 360);
  await s.shot(page, 'card-360');
});

e2e('on a laptop (1280×800) list, conversation and preview sit side by side and the panel buttons are hidden', async ({ s }) => {
  const page = await s.user('erika', { viewport: laptop });
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  await expect(card(page).getByRole('button', { name: 'Übernehmen' })).toBeVisible();
  await noSidewaysScroll(page, 'the chat at 1280 px');
  await expect(page.getByRole('button', { name: 'Seitenvorschau' })).toBeHidden();
  await expect(page.getByRole('button', { name: 'Unterhaltungen' })).toBeHidden();
  const boxes = {};
  for (const [k, loc] of [['list', page.getByRole('navigation', { name: 'Unterhaltungen' })],
    ['chat', page.getByRole('region', { name: 'KI-Chat' })], ['preview', preview(page)]]) {
    await expect(loc).toBeVisible();
    boxes[k] = await loc.boundingBox();
  }
  if (!(boxes.list.x + boxes.list.width <= boxes.chat.x && boxes.chat.x + boxes.chat.width <= boxes.preview.x)) {
    throw new Error(`columns not side by side: ${JSON.stringify(boxes)}`);
  }
  if (Math.abs(boxes.list.y - boxes.chat.y) > 2 || Math.abs(boxes.chat.y - boxes.preview.y) > 2) throw new Error(`columns not aligned at the top: ${JSON.stringify(boxes)}`);
  if (boxes.chat.width < 450) throw new Error(`the conversation is ${boxes.chat.width} px wide at 1280 px`);
  await everyCardButtonUsable(page, laptop.width);
  // The whole card is on the first screen.
  const bottom = await card(page).getByRole('button', { name: 'Behalten' }).evaluate((el) => el.getBoundingClientRect().bottom);
  if (bottom > laptop.height) throw new Error(`Behalten ends at ${bottom} px, below the ${laptop.height} px window`);
  await s.shot(page, 'laptop-card-de');
});
