// The slash menu (screen 2) used by keyboard only: "/" at the start of the
// message opens the process catalogue as a combobox; arrows move, Escape
// closes, Enter chooses; the process shows as a chip and the tour starts.
import { e2e, expect, login } from '../lib/e2e.js';
import { startTour, tourHeader } from '../lib/chat.js';

e2e('the slash menu by keyboard only chooses a process and starts its tour', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English' });
  const input = page.getByRole('combobox', { name: 'Nachricht' });
  const list = page.getByRole('listbox', { name: 'Prozesse' });
  await input.focus();
  await expect(input).toBeFocused();

  await page.keyboard.type('/');
  await expect(list).toBeVisible();
  await expect(input).toHaveAttribute('aria-expanded', 'true');
  await expect(list.getByRole('option', { name: /SEO optimieren/ })).toBeVisible();
  await expect(list.getByRole('option', { name: /Inhalt verbessern/ })).toBeVisible();
  await s.shot(page, 'slash-menu-open');

  await page.keyboard.press('Escape');
  await expect(list).toBeHidden();
  await expect(input).toHaveAttribute('aria-expanded', 'false');

  await page.keyboard.press('ArrowDown');
  await expect(list).toBeVisible();
  await expect(list.getByRole('option', { selected: true })).toHaveCount(1);
  const chosen = (await list.getByRole('option', { selected: true }).textContent()).trim();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowUp');
  await expect(list.getByRole('option', { selected: true })).toContainText(chosen.split(' ')[0]);
  await page.keyboard.press('Enter');
  await expect(list).toBeHidden();
  const name = chosen.startsWith('SEO') ? 'SEO optimieren' : 'Inhalt verbessern';
  await expect(page.getByText(`Prozess: ${name}`)).toBeVisible();
  await expect(page.getByRole('button', { name: `Prozess ${name} entfernen` })).toBeVisible();
  await s.shot(page, 'slash-chip');

  // Typing a message and Enter sends it: the tour of the chosen process starts.
  await input.focus();
  await page.keyboard.type('Los geht’s');
  await page.keyboard.press('Enter');
  await expect(tourHeader(page)).toContainText(/Punkt 1 von \d/);
});
