// Ending a tour (screen 3) and the dashboard (screen 6): a skipped point is
// listed on the dashboard in the editor's words, and its link starts the
// process again on that page — from the skipped point.
import { e2e, expect, login, speed, firstPaint } from '../lib/e2e.js';
import { startTour, tourHeader, card, answer } from '../lib/chat.js';

e2e('ending a tour keeps what was applied; the dashboard lists the skipped point and starts the process again from it', async ({ s, server }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  await expect(tourHeader(page)).toContainText('Punkt 1 von 4');
  await answer(page, 'Übernehmen');
  await expect(tourHeader(page)).toContainText('Punkt 2 von 4');
  await answer(page, 'Überspringen');
  await expect(tourHeader(page)).toContainText('Punkt 3 von 4');

  // End the tour with ×, confirming the question.
  let question = '';
  page.once('dialog', (d) => { question = d.message(); d.accept(); });
  await page.getByRole('button', { name: 'Tour beenden' }).click();
  await expect(page.getByRole('button', { name: 'Tour beenden' })).toBeHidden();
  if (question !== 'Diese Tour beenden? Übernommene Änderungen bleiben erhalten.') throw new Error(`confirmation asked ${JSON.stringify(question)}`);
  await expect(tourHeader(page)).toContainText('About · English · Tour beendet');
  await expect(page.getByText('Die Tour ist beendet. Übernommene Änderungen bleiben erhalten')).toBeVisible();
  await expect(page.getByText('Prozess: SEO optimieren')).toBeHidden();
  await expect(card(page)).toBeHidden();
  await expect(page.getByText('Übernommen: Seite „About“ – Beschreibung')).toBeVisible();
  await s.shot(page, 'tour-ended');

  // The dashboard: the skipped SEO title is an open point of "About".
  await page.getByRole('link', { name: 'Übersicht' }).click();
  await expect(page.getByRole('heading', { name: 'Deine Website' })).toBeVisible();
  speed('first paint: dashboard', await firstPaint(page), 'ms', 300);
  const points = page.getByRole('region', { name: 'Offene Punkte' });
  const point = points.getByRole('link', { name: 'SEO-Titel fehlt auf „About“' });
  await expect(point).toBeVisible();
  const improve = page.getByRole('region', { name: 'Eine Seite verbessern' });
  await expect(improve.getByRole('link', { name: 'About' }).first()).toBeVisible();
  // Only pages erika may edit are suggested: the Services branch she may only read is not.
  for (const readOnly of ['Services', 'Web development', 'Consulting', 'Leistungen', 'Webentwicklung']) {
    await expect(improve.getByRole('link', { name: readOnly, exact: true })).toHaveCount(0);
  }
  await expect(page.getByRole('region', { name: 'Letzte Unterhaltungen' }).getByRole('link', { name: /About/ })).toBeVisible();
  await s.shot(page, 'dashboard');

  // Its link starts the process on that page; the tour begins with the skipped point.
  await point.click();
  await expect(page.getByRole('radio', { name: 'About', exact: true })).toBeChecked();
  await page.getByRole('button', { name: 'Starten' }).click();
  await page.waitForURL(/\/chat\/\d+$/);
  await expect(tourHeader(page)).toContainText('About · English · Punkt 1 von 3');
  await expect(card(page).getByRole('region', { name: 'SEO-Titel' })).toBeVisible();
  await s.shot(page, 'tour-again-from-the-skipped-point');
  void server;
});
