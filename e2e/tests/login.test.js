// Login and logout (screen 1): the right password opens Waymark in the
// user's backend language, a wrong one says so and opens nothing.
import { e2e, expect, login, logins, firstPaint, speed } from '../lib/e2e.js';

e2e('login with the wrong password shows a clear message and opens nothing', async ({ s, server }) => {
  const page = await s.user('erika');
  await page.goto(`${server.url}/`);
  await expect(page.getByRole('heading', { name: 'Log in to Waymark' })).toBeVisible();
  speed('first paint: login', await firstPaint(page), 'ms', 300);
  await page.getByLabel('Username').fill('erika');
  await page.getByLabel('Password').fill('not-her-password');
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('alert')).toContainText('Wrong username or password.');
  await s.shot(page, 'login-wrong-password');
  // Still logged out: the dashboard sends back to the login page.
  await page.goto(`${server.url}/dashboard`);
  await expect(page.getByRole('heading', { name: 'Log in to Waymark' })).toBeVisible();
  // The form is usable by keyboard only.
  await page.getByLabel('Username').fill(logins.erika.username);
  await page.getByLabel('Password').fill(logins.erika.password);
  await page.keyboard.press('Enter');
  await expect(page.getByText('Angemeldet als erika')).toBeVisible();
});

e2e('login with the right password opens the German UI for erika and logout ends the session', async ({ s, server }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await expect(page.getByRole('navigation', { name: 'Hauptnavigation' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Übersicht' })).toBeVisible();
  await s.shot(page, 'after-login-de');
  await page.getByRole('button', { name: 'Abmelden' }).click();
  await expect(page.getByRole('heading', { name: 'Log in to Waymark' })).toBeVisible();
  await page.goto(`${server.url}/chat`);
  await expect(page.getByRole('heading', { name: 'Log in to Waymark' })).toBeVisible();
});
