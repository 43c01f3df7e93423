// A whole SEO tour of the demo's "About" page in the browser (screens 2–5):
// the editor applies one proposal, asks for a variant, skips one and keeps
// one; the preview highlights what the model talks about and shows the
// applied change without a reload; the summary appears at the end.
import { e2e, expect, login, speed, firstPaint } from '../lib/e2e.js';
import { expectNoSeriousViolations } from '../lib/axe.js';
import { startTour, tourHeader, card, preview, conversation, proposed, watchText, seenAt, answer, expectSummary } from '../lib/chat.js';

e2e('a whole SEO tour: apply, variant, skip, keep, and the summary appears', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  const id = await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  speed('first paint: chat', await firstPaint(page), 'ms', 300);
  s.onFailure(async () => {
    const c = await conversation(s, id);
    return `conversation ${id} as the API reports it: status ${c.status}, progress ${JSON.stringify(c.progress)}, card ${c.card ? c.card.calls[0].preview[0].field : null}, updatedAt ${c.updatedAt}; page shows data-status=${await page.locator('#conversation').getAttribute('data-status')}`;
  });

  // Point 1: the missing meta description, the page itself highlighted.
  await expect(tourHeader(page)).toContainText('About · English · Punkt 1 von 4');
  await expect(card(page).getByRole('heading', { name: 'Seite: About' })).toBeVisible();
  await expect(card(page).getByText('Betroffen')).toBeVisible();
  await expect(card(page).getByRole('region', { name: 'Beschreibung' })).toContainText('Aktuell');
  await expect(card(page).getByText(/\d+ Zeichen, empfohlen 140–160/)).toBeVisible();
  await expect(preview(page).getByText('Hervorgehoben')).toBeVisible();
  const description = await proposed(s, id);
  await expect(card(page)).toContainText(description);
  await s.shot(page, 'tour-point-1-card');
  // The card's search-result preview: the page as a results page lists it with the proposal,
  // on a desktop and on a phone; looked at on a laptop and on a phone, axe-core clean, no sideways scrolling.
  const serp = card(page).getByRole('region', { name: 'Vorschau im Suchergebnis' });
  await expect(serp.getByText('Desktop', { exact: true })).toBeVisible();
  await expect(serp.getByText('Smartphone', { exact: true })).toBeVisible();
  await expect(serp.getByText('about', { exact: true }).first()).toBeVisible();
  await expect(serp.getByText('About', { exact: true }).first()).toBeVisible();
  for (const [size, viewport] of [['laptop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
    await page.setViewportSize(viewport);
    await expect(serp).toBeVisible();
    await s.shot(page, `tour-search-preview-${size}`);
    await s.shotOf(serp, `tour-search-preview-${size}-only`);
    await expectNoSeriousViolations(page, `the card with its search-result preview at ${size} size`);
    const [sw, w] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if (sw > w) throw new Error(`at ${size} size the page is ${sw} px wide in a ${w} px window`);
  }
  await page.setViewportSize({ width: 1400, height: 900 }); // the suite's default again
  await s.shotOf(page.getByRole('region', { name: 'KI-Chat' }), 'chat-with-card');

  // Apply: the status line, and the preview shows the new description without a reload.
  await page.evaluate(() => { window.__noReload = true; });
  await watchText(page, 'point2', 'Punkt 2 von 4');
  await answer(page, 'Übernehmen');
  await expect(tourHeader(page)).toContainText('Punkt 2 von 4');
  const seen = await seenAt(page, 'point2');
  const stored = Date.parse((await conversation(s, id)).updatedAt);
  speed('stored card visible after its commit', seen - stored, 'ms', 100);
  // The new card takes the focus.
  await expect(card(page).getByRole('heading', { name: 'Seite: About' })).toBeFocused();
  await expect(page.getByText('Übernommen: Seite „About“ – Beschreibung')).toBeVisible();
  await expect(preview(page)).toContainText(description);
  if (!(await page.evaluate(() => window.__noReload))) throw new Error('the page reloaded to show the applied change');
  await s.shot(page, 'tour-point-2-card');

  // Point 2: the SEO title; another variant brings a different proposal for the same field.
  const first = await proposed(s, id);
  await expect(card(page)).toContainText(first);
  await answer(page, 'Andere Variante');
  await expect(page.getByText('Andere Variante angefragt')).toBeVisible();
  const second = await (async () => {
    const deadline = Date.now() + 10000;
    for (;;) {
      const c = await conversation(s, id);
      if (c.card && c.card.calls[0].preview[0].proposed !== first) return c.card.calls[0].preview[0].proposed;
      if (Date.now() > deadline) throw new Error(`no other variant than ${first}`);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
    }
  })();
  await expect(card(page)).toContainText(second);
  await expect(tourHeader(page)).toContainText('Punkt 2 von 4');
  await s.shot(page, 'tour-variant');

  // Skip it: point 3, the header of the "About" element, highlighted in the preview.
  await answer(page, 'Überspringen');
  await expect(tourHeader(page)).toContainText('Punkt 3 von 4');
  await expect(page.getByText('Übersprungen: Seite „About“ – SEO-Titel')).toBeVisible();
  await expect(preview(page).getByText('Hervorgehoben')).toBeVisible();
  await s.shot(page, 'tour-point-3-highlight');

  // Keep it: point 4.
  await answer(page, 'Behalten');
  await expect(tourHeader(page)).toContainText('Punkt 4 von 4');
  await expect(page.getByText(/^Behalten: Inhaltselement/)).toBeVisible();

  // Apply the last one: the tour completes and the summary appears.
  await answer(page, 'Übernehmen');
  await expectSummary(page, ['2 übernommen', '1 übersprungen', '1 behalten']);

  // The last outcome, the model's closing answer in erika's language (German, on the English page), and no failure notice.
  // (the element's title is its header, which the last answer just changed)
  await expect(page.getByText(/^Übernommen: Inhaltselement „Team[^“]*“ – Überschrift$/)).toBeVisible();
  await expect(page.getByText('Die Tour durch „About“ ist fertig: 4 Punkte.', { exact: false })).toBeVisible();
  // The message list shows its end: the closing answer is in view, not below the list's fold.
  await expect(page.getByText('Die Tour durch „About“ ist fertig: 4 Punkte.', { exact: false })).toBeScrolledIntoView();
  await expect(page.getByText('Die Tour ist beendet.')).toBeHidden();
  // The screenshot of the finished tour, once its last outcome and closing answer are in.
  await s.shot(page, 'tour-summary');
});
