// States that read true: a process chosen in the "/" menu is ready, not
// "Analyse läuft"; a tour on a page the editor may only read does not begin
// and says why; a message typed while a card waits withdraws it with a
// trace; after the last card the tour is done — Fertig, the next page or
// that there is none, no ×, no highlight — and each answer shows once.
import { e2e, expect, login } from '../lib/e2e.js';
import { startTour, tourHeader, card, answer, openSlashMenu } from '../lib/chat.js';

e2e('a process chosen in the slash menu reads ready, not analysing', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English' });
  await openSlashMenu(page);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(page.getByText(/Prozess: /)).toBeVisible();
  await expect(tourHeader(page)).toContainText('Bereit');
  if ((await tourHeader(page).textContent()).includes('Analyse läuft')) throw new Error('the header says "Analyse läuft" while nothing runs');
  await s.shot(page, 'state-process-chosen');
});

e2e('a tour on a page the editor may only read does not begin and says why', async ({ s, server }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await page.goto(`${server.url}/chat`);
  await page.getByRole('radio', { name: 'Services', exact: true }).check();
  await page.getByLabel('Sprache', { exact: true }).selectOption({ label: 'English' });
  await page.getByLabel('Prozess', { exact: true }).selectOption({ label: 'SEO optimieren' });
  await page.getByRole('button', { name: 'Starten' }).click();
  await expect(page.getByRole('alert')).toContainText('Diese Seite darfst du nur lesen');
  if (new URL(page.url()).pathname !== '/chat') throw new Error(`a tour on a read-only page started: ${page.url()}`);
  await s.shot(page, 'state-read-only-page');
});

e2e('a message while a card waits withdraws it with a trace', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  await expect(card(page)).toBeVisible();
  await page.getByRole('combobox', { name: 'Nachricht' }).fill('Warum schlägst du das vor?');
  await page.getByRole('button', { name: 'Senden' }).click();
  await expect(page.getByText('Vorschlag zurückgezogen: deine Nachricht geht vor.')).toBeVisible();
  await s.shot(page, 'state-card-withdrawn');
});

e2e('after the last card the tour is done: Fertig, the next page, no ×, no highlight, each answer once', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  for (let i = 1; i <= 4; i++) {
    await expect(tourHeader(page)).toContainText(`Punkt ${i} von 4`);
    await answer(page, 'Übernehmen');
  }
  await expect(tourHeader(page)).toContainText('Abgeschlossen');
  await expect(page.getByRole('link', { name: 'Fertig' })).toBeVisible();
  await expect(page.getByText(/Nächste Seite mit offenen Punkten|Nächste Seite zum Verbessern|Keine weitere Seite zu verbessern/)).toBeVisible();
  await expect(page.getByRole('button', { name: 'Tour beenden' })).toHaveCount(0);
  await expect(page.locator('.highlighted')).toHaveCount(0);
  await expect(page.locator('li.message.user', { hasText: 'Übernehmen' })).toHaveCount(0);
  await expect(page.locator('li.outcome.applied')).toHaveCount(4);
  await s.shot(page, 'state-tour-done');
});
