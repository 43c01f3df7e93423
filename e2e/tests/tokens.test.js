// API tokens are revoked in the browser (settings: the reader's own), one
// at a time, after a confirmation; a revoked token is refused at once.
import { e2e, expect, login, logins } from '../lib/e2e.js';
import { until } from '../lib/expect.js';

e2e('an editor revokes her own API token in the settings after confirming, and it is refused from then on', async ({ s, server }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  await page.goto(`${server.url}/settings`);
  const tokens = page.getByRole('region', { name: 'Deine API-Tokens' });
  const revoke = tokens.getByRole('button', { name: /widerrufen$/ }).first();
  await expect(revoke).toBeVisible();
  const before = await tokens.getByRole('listitem').count();
  await s.shot(page, 'own-tokens');
  // Dismissed: nothing changes.
  let asked = '';
  page.once('dialog', (d) => { asked = d.message(); d.dismiss(); });
  await revoke.click();
  await until(page, () => asked, 'the confirmation');
  if (!/widerrufen\?/.test(asked)) throw new Error(`the confirmation reads ${asked}`);
  await expect(tokens.getByRole('listitem')).toHaveCount(before);
  if ((await fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${logins.erika.token}` } })).status !== 200) throw new Error('the token stopped working without a revoke');
  // Accepted: the token is gone and refused.
  page.once('dialog', (d) => d.accept());
  await revoke.click();
  await expect(page.getByRole('status').filter({ hasText: 'Widerrufen' })).toBeVisible();
  await expect(tokens.getByRole('listitem')).toHaveCount(before - 1);
  await until(page, async () => (await fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${logins.erika.token}` } })).status === 401,
    'the revoked token to be refused');
  await s.shot(page, 'own-token-revoked');
});
