// The inbox means "needs you": the second approver's inbox lists only the
// cards she must decide — four-eyes cards of others, never an editor's own
// tour card on a one-person configuration — each with page, language,
// requester, time and a link; the navigation counts them live; the editor
// reads who released her card.
import { e2e, expect, login } from '../lib/e2e.js';
import { until } from '../lib/expect.js';
import { startTour, card } from '../lib/chat.js';

e2e('the inbox lists only what the approver must decide, counts it in the navigation and the editor reads who decided', async ({ s, server }) => {
  const erika = await s.user('erika');
  await login(s, erika, 'erika');
  // erika's own tour card on the one-person configuration.
  await startTour(s, erika, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  await expect(card(erika)).toBeVisible();

  const paula = await s.user('paula', { timezoneId: 'Pacific/Auckland' }); // she reads times in her zone
  await login(s, paula, 'paula', { lang: 'en' });
  await paula.goto(`${server.url}/inbox`);
  const nav = paula.getByRole('navigation', { name: /^(Main|Hauptnavigation)$/ });
  s.onFailure(async () => `paula's navigation: ${await nav.innerHTML()}; /inbox/count now: ${await paula.evaluate(async () => { const r = await fetch('/inbox/count'); return r.status + ' ' + await r.text(); })}`);
  await expect(paula.getByText('Nothing is waiting for you.')).toBeVisible();
  await expect(paula.getByRole('article')).toHaveCount(0);
  await expect(nav.locator('.count')).toHaveCount(0);

  // A four-eyes card of erika's: it needs paula.
  await erika.goto(`${server.url}/chat`);
  await erika.getByRole('radio', { name: 'About', exact: true }).check();
  await erika.getByLabel('Sprache', { exact: true }).selectOption({ label: 'English' });
  const assistant = erika.getByLabel('Assistent', { exact: true });
  const fourEyes = (await assistant.getByRole('option').allTextContents()).find((o) => /four eyes|vier Augen/i.test(o));
  if (!fourEyes) throw new Error('the picker offers no four-eyes assistant');
  await assistant.selectOption({ label: fourEyes });
  await erika.getByRole('button', { name: 'Starten' }).click();
  await erika.waitForURL(/\/chat\/\d+$/);
  await erika.getByRole('combobox', { name: 'Nachricht' }).fill('Bitte verbessere Seite 2.');
  await erika.getByRole('button', { name: 'Senden' }).click();
  await expect(card(erika).getByRole('button', { name: 'Freigabe durch zweite Person' })).toBeDisabled();

  // It arrives in paula's inbox, with page, language, requester, time and a link; the count follows.
  const item = paula.getByRole('region', { name: 'Requested by erika' });
  await expect(item).toHaveCount(1);
  await expect(item.getByRole('link', { name: 'About' })).toBeVisible();
  await expect(item.getByText('English')).toBeVisible();
  await expect(item.locator('time')).toHaveAttribute('datetime', /^\d{4}-\d\d-\d\dT/);
  // The time reads in paula's time zone and language, not in UTC.
  const at = await item.locator('time').getAttribute('datetime');
  const local = new Date(at).toLocaleString('en', { timeZone: 'Pacific/Auckland', dateStyle: 'medium', timeStyle: 'short' });
  await expect(item.locator('time')).toContainText(local);
  if (/UTC/.test(await item.locator('time').innerText())) throw new Error('the request time is shown in UTC');
  await expect(item.getByRole('link', { name: 'Link to this request' })).toHaveAttribute('href', /^\/inbox#run-/);
  await expect(nav.locator('.count'), { timeout: 8000 }).toContainText('1');
  await s.shot(paula, 'inbox-needs-you');

  await item.getByRole('button', { name: 'Release' }).click();
  await expect(paula.getByText('Released.')).toBeVisible();
  // The count follows what is left to decide (the model may have proposed the next change).
  await until(paula, async () => {
    const left = await paula.locator('section.waiting').count();
    const shown = await nav.locator('.count').count() ? Number(await nav.locator('.count').textContent()) : 0;
    return shown === left;
  }, 'the navigation count to equal the cards left in the inbox', 8000);
  // The editor reads who released it.
  await expect(erika.getByText(/Von paula freigegeben\.|Übernommen: Seite „About“/).first()).toBeVisible();
  await s.shot(erika, 'four-eyes-released-by-paula');
});
