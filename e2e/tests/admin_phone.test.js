// Administration tables at phone width (390 px): the attachments of a
// configuration and a skill's versions fit the window — every remove button
// is on screen, nothing scrolls sideways.
import { e2e, expect, login } from '../lib/e2e.js';

async function fits(s, page, what) {
  const wide = await page.evaluate(() => {
    const out = [];
    if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push(`the page is ${document.documentElement.scrollWidth} px wide`);
    for (const t of document.querySelectorAll('table')) {
      if (t.scrollWidth > t.clientWidth + 1 || t.getBoundingClientRect().right > window.innerWidth + 1) out.push(`a table is ${t.scrollWidth} px wide in ${t.clientWidth} px`);
    }
    for (const b of document.querySelectorAll('table button')) {
      const r = b.getBoundingClientRect();
      if (r.right > window.innerWidth + 1 || r.left < 0) out.push(`button ${b.getAttribute('aria-label') || b.textContent.trim()} at ${Math.round(r.left)}–${Math.round(r.right)} px`);
    }
    return out;
  });
  await s.shot(page, what);
  if (wide.length) throw new Error(`${what} at 390 px: ${wide.join('; ')}`);
}

e2e('at phone width the attachments and a skill\'s versions fit the window with every button on screen', async ({ s, server }) => {
  const page = await s.user('admin', { viewport: { width: 390, height: 844 } });
  await login(s, page, 'admin', { lang: 'en' });
  await page.goto(`${server.url}/admin/configurations/1/skills`);
  const remove = page.getByRole('button', { name: /^Remove|^Detach|entfernen$/ });
  await expect(remove).toBeVisible();
  await fits(s, page, 'attachments');
  const skill = page.getByRole('table').first().getByRole('link').first();
  await skill.click();
  await expect(page.getByRole('heading', { name: /Versions/ })).toBeVisible();
  await fits(s, page, 'skill-versions');
});
