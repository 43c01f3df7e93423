// Campaigns in the web UI: erika starts one from the dashboard over the
// demo's guide branch (pages whose description is missing), watches its
// progress reach cards, sees each card's search-result preview, asks for
// another variant of one card with a wish (which its tour's transcript
// shows), selects two cards and applies them together, and sees one result
// per card; the pages are axe-core clean and are looked at on a laptop and a phone.
import { e2e, expect, login } from '../lib/e2e.js';
import { expectNoSeriousViolations } from '../lib/axe.js';
import { until } from '../lib/expect.js';
import { join } from 'node:path';

// view saves what the window shows with el (a selector) scrolled to its top:
// a full-page shot of a long list is too tall to look at.
async function view(s, page, el, name) {
  await page.locator(el).first().evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(s.dir, `view-${name}.png`), caret: 'initial' });
}

e2e('a campaign started from the dashboard reaches cards; two selected cards are applied together', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await page.getByRole('link', { name: 'Übersicht' }).click();
  const form = page.locator('#campaign-form');
  await expect(form.getByRole('heading', { name: 'Kampagne starten' })).toBeVisible();
  await form.getByLabel('Prozess').selectOption({ label: 'SEO optimieren' });
  await form.getByLabel('Seiten mit').selectOption('descriptionMissing');
  await form.getByLabel(/Startseite/).fill('1000');
  await form.getByLabel('Tiefe').fill('1');
  await form.getByLabel('Gleichzeitige Seiten').fill('3');
  await expectNoSeriousViolations(page, 'the dashboard with the campaign form');

  // Bad input is shown in the form and starts nothing.
  await form.getByLabel('Budget').fill('viel');
  await form.getByRole('button', { name: 'Kosten schätzen' }).click();
  await expect(page.locator('#campaign-form').getByRole('alert')).toContainText('„Budget“ muss eine Zahl sein. Es wurde keine Kampagne gestartet.');
  if (!/\/dashboard$/.test(page.url())) throw new Error(`a refused form left the dashboard: ${page.url()}`);
  // The estimate comes before the start: pages × tokens per tour and the cost; the start confirms it.
  await page.locator('#campaign-form').getByLabel('Budget').fill('5');
  await page.locator('#campaign-form').getByRole('button', { name: 'Kosten schätzen' }).click();
  const estimate = page.locator('#campaign-estimate');
  await expect(estimate.getByRole('heading', { name: 'Geschätzte Kosten' })).toBeVisible();
  await expect(estimate).toContainText(/\d+ Seiten × [\d.]+ Token rein und [\d.]+ raus pro Tour/);
  if (!/\/dashboard$/.test(page.url())) throw new Error(`the estimate left the dashboard: ${page.url()}`);
  await expectNoSeriousViolations(page, 'the campaign form with its estimate');
  await view(s, page, '#campaign-form', 'campaign-estimate');
  await page.locator('#campaign-form').getByRole('button', { name: 'Kampagne starten' }).click();
  await page.waitForURL(/\/campaigns\/\d+$/);
  await expect(page.getByRole('heading', { level: 1, name: /Kampagne \d+: SEO optimieren/ })).toBeVisible();

  // The progress refreshes itself until pages wait with proposals.
  const progress = page.locator('#campaign-progress');
  await expect(progress.getByText('Zustand: läuft')).toBeVisible();
  await expect(progress.getByRole('button', { name: 'Fortsetzen' })).toBeDisabled();
  await until(page, async () => Number(await page.locator('#campaign-progress [data-count="proposals"]').textContent({ timeout: 200 })) >= 2,
    'two pages with proposals', 90000);

  // Pause: the pause button is disabled with its reason, resume is offered.
  await progress.getByRole('button', { name: 'Pausieren' }).click();
  await expect(page.locator('#campaign-progress').getByText('Zustand: pausiert')).toBeVisible();
  await expect(page.locator('#campaign-progress').getByRole('button', { name: 'Pausieren' })).toBeDisabled();
  await expect(page.locator('#campaign-progress').getByText('Ist pausiert.')).toBeVisible();

  await page.locator('#campaign-progress').getByRole('link', { name: /Vorschlagsliste aktualisieren/ }).click();
  const review = page.getByRole('region', { name: 'Vorschläge prüfen' });
  const cards = review.locator('article.review-card');
  await expect(cards.first()).toBeVisible();
  if (await cards.count() < 2) throw new Error(`the review list shows ${await cards.count()} cards, want 2 or more`);
  await expect(cards.first().locator('ins').first()).toBeVisible();
  await expect(cards.first().getByRole('link', { name: 'Im Chat fortsetzen' })).toBeVisible();
  // Each card shows its page's search result with the proposal, drawn by
  // the chat card's own partial.
  const serp = cards.first().getByRole('region', { name: 'Vorschau im Suchergebnis' });
  await expect(serp).toBeVisible();
  await expect(serp.locator('.serp-desktop .serp-title')).toBeVisible();
  await expectNoSeriousViolations(page, 'the campaign page with its review list');
  await s.shot(page, 'campaign-laptop');
  await view(s, page, '#review', 'laptop-review-preview');

  // "Andere Variante" for one card with a wish typed at that card: the
  // result names it, and the tour's transcript shows the wish with the answer.
  const wish = 'mit dem Ortsnamen';
  const first = cards.first();
  const firstTitle = (await first.locator('h3').textContent()).split('·')[0].trim();
  const chatHref = await first.getByRole('link', { name: 'Im Chat fortsetzen' }).getAttribute('href');
  await first.getByLabel('Wunsch für diese Variante (optional)').fill(wish);
  await first.getByRole('button', { name: 'Andere Variante' }).click();
  await expect(page.getByRole('region', { name: 'Vorschläge prüfen' }).locator('.results').getByText(`${firstTitle}: andere Variante angefragt`)).toBeVisible();
  await expectNoSeriousViolations(page, 'the campaign page after a variant with a wish');
  // The variant's new card joins the list again once the model proposed it.
  await until(page, async () => {
    await page.locator('#campaign-progress').getByRole('link', { name: /Vorschlagsliste aktualisieren/ }).click();
    await page.getByRole('region', { name: 'Vorschläge prüfen' }).locator('article.review-card').first().waitFor({ timeout: 500 });
    return await cards.count() >= 2;
  }, 'two cards in the review list after the variant', 60000);

  // Draw the list once more and wait until it is swapped in: a refresh of
  // the loop above may still be under way, and the titles must be read
  // from the list whose boxes are checked.
  await Promise.all([
    page.waitForResponse((r) => /\/campaigns\/\d+\/review/.test(r.url())),
    page.locator('#campaign-progress').getByRole('link', { name: /Vorschlagsliste aktualisieren/ }).click(),
  ]);
  await page.waitForFunction(() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling'));
  const titles = [await cards.nth(0).locator('h3').textContent(), await cards.nth(1).locator('h3').textContent()]
    .map((t) => t.split('·')[0].trim());
  await cards.nth(0).getByRole('checkbox').check();
  await cards.nth(1).getByRole('checkbox').check();
  await review.getByRole('button', { name: 'Ausgewählte übernehmen' }).click();
  const results = page.getByRole('region', { name: 'Vorschläge prüfen' }).locator('.results');
  await expect(results.getByRole('heading', { name: 'Ergebnis' })).toBeVisible();
  for (const t of titles) await expect(results.getByText(`${t}: übernommen`)).toBeVisible();
  await expect(results.locator('li')).toHaveCount(2);
  await expectNoSeriousViolations(page, 'the campaign page after a bulk apply');
  await s.shot(page, 'campaign-applied-laptop');
  await view(s, page, 'h1', 'laptop-top');
  await view(s, page, '#review', 'laptop-review');

  // The same page on a phone.
  const phone = await s.user('erika-phone', { viewport: { width: 390, height: 844 } });
  await login(s, phone, 'erika');
  await phone.goto(page.url());
  await expect(phone.getByRole('region', { name: 'Vorschläge prüfen' })).toBeVisible();
  await expectNoSeriousViolations(phone, 'the campaign page on a phone');
  await view(s, phone, 'h1', 'phone-top');
  await view(s, phone, '#review', 'phone-review');
  await view(s, phone, 'article.review-card', 'phone-card');
  await phone.getByRole('link', { name: 'Übersicht' }).click();
  await expect(phone.locator('#campaign-form')).toBeVisible();
  await view(s, phone, '#campaign-form', 'phone-dashboard-form');

  // The tour of the variant's card: the editor's wish stands in its transcript.
  await page.goto(new URL(chatHref, page.url()).href);
  await expect(page.locator('.outcome.variant .wish').getByText(`Dein Wunsch: „${wish}“`)).toBeVisible();
  await s.shot(page, 'campaign-variant-chat');
}, { timeout: 300000 }); // a campaign's pages, a variant's new card and a bulk apply, on a laptop and a phone
