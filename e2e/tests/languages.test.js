// German and English UI: each user sees Waymark in their backend language;
// the inbox is there only for holders of the approve grant.
import { e2e, expect, login, speed, firstPaint } from '../lib/e2e.js';

e2e('German UI for erika and English UI for paula, the inbox only for the approver', async ({ s, server }) => {
  const erika = await s.user('erika');
  await login(s, erika, 'erika');
  await erika.goto(`${server.url}/dashboard`);
  await expect(erika.getByRole('heading', { name: 'Deine Website' })).toBeVisible();
  speed('first paint: dashboard', await firstPaint(erika), 'ms', 300);
  for (const h of ['Offene Punkte', 'Eine Seite verbessern', 'Letzte Unterhaltungen']) {
    await expect(erika.getByRole('heading', { name: h })).toBeVisible();
  }
  await expect(erika.getByRole('link', { name: 'Freigaben' })).toHaveCount(0);
  await expect(erika.locator('html')).toHaveAttribute('lang', 'de');
  await s.shot(erika, 'dashboard-de');

  const paula = await s.user('paula');
  await login(s, paula, 'paula', { lang: 'en' });
  await paula.goto(`${server.url}/dashboard`);
  await expect(paula.getByRole('heading', { name: 'Your website' })).toBeVisible();
  await expect(paula.locator('html')).toHaveAttribute('lang', 'en');
  await s.shot(paula, 'dashboard-en');
  await paula.getByRole('link', { name: 'Inbox' }).click();
  await expect(paula.getByRole('heading', { name: 'Waiting for your release' })).toBeVisible();
  speed('first paint: inbox', await firstPaint(paula), 'ms', 300);
  await expect(paula.getByText('Nothing is waiting for you.')).toBeVisible();
  await s.shot(paula, 'inbox-en');
  await paula.getByRole('link', { name: 'Chat' }).click();
  await expect(paula.getByRole('heading', { name: 'Start a conversation' })).toBeVisible();
  await expect(paula.getByRole('button', { name: 'Start' })).toBeVisible();
  await s.shot(paula, 'chat-picker-en');
});
