// The skills review in the browser: an administrator
// edits a backend skill, sees the diff against the approved version, approves
// exactly the digest shown, and the editor's slash menu then lists it; an
// approval sent from a page that another session made stale is refused, and
// the page shows the new diff.
import { e2e, expect, login, logins } from '../lib/e2e.js';
import { startTour, openSlashMenu } from '../lib/chat.js';

// The demo's "Tonalität der Marke" (skill 3) is approved reference text, no
// process: made a process by an edit, it enters the slash menu only once
// that edit is approved.
const skillName = 'Tonalität der Marke';

async function openSkill(s, page, name) {
  await page.goto(`${s.server.url}/admin/skills`);
  await expect(page.getByRole('heading', { name: 'Skills', level: 1 })).toBeVisible();
  await page.getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
}

// approveDigest is the digest the Approve form sends: its hidden field, in
// the region of the diff it was computed for.
async function approveDigest(page) {
  return page.getByRole('region', { name: 'Changes since the last approval' }).locator('input[name="digest"]').getAttribute('value');
}

async function menuNames(s) {
  const r = await s.server.api(logins.erika.token, 'GET', '/api/configurations/1/process-skills');
  return r.skills.map((k) => k.name);
}

e2e('an administrator edits a backend skill, sees the diff, approves it, and the editor\'s slash menu lists it', async ({ s }) => {
  const admin = await s.user('admin');
  await login(s, admin, 'admin', { lang: 'en' });
  await openSkill(s, admin, skillName);
  await expect(admin.getByText(/The version shown \(digest [0-9a-f]{12}\) is approved\./)).toBeVisible();

  // Edit: make it a process.
  const text = admin.getByLabel('SKILL.md text');
  const md = await text.inputValue();
  if (md.includes('process: true')) throw new Error(`the demo skill is a process already:\n${md}`);
  const edited = md.replace(/\n---\n/, '\nprocess: true\n---\n');
  await text.fill(edited);
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin.getByText('Saved as a new version.')).toBeVisible();

  // The diff against the approved snapshot shows the added line, and the
  // Approve form names the digest of what is shown.
  const diff = admin.getByRole('list', { name: 'Changes since the last approval' });
  await expect(diff.getByRole('insertion').filter({ hasText: 'process: true' })).toBeVisible();
  await expect(admin.getByText('does not instruct: the current digest has no approval')).toBeVisible();
  const detail = await s.server.api(logins.admin.token, 'GET', '/api/skills/3');
  const shown = await approveDigest(admin);
  await expect(admin.getByText(`You approve exactly the version shown here, digest ${detail.digest.slice(3, 15)}.`)).toBeVisible();
  if (shown !== detail.digest) throw new Error(`the page approves ${shown}, the skill's digest is ${detail.digest}`);
  if ((await menuNames(s)).includes(skillName)) throw new Error('the unapproved edit is in the editor\'s menu already');
  await s.shotOf(admin.getByRole('region', { name: 'Changes since the last approval' }), 'diff-and-approve');
  await s.shot(admin, 'skill-approve-page');

  await admin.getByRole('button', { name: 'Approve this version' }).click();
  await expect(admin.getByText('Approved. The version shown instructs from now on.')).toBeVisible();
  await expect(admin.getByText('instructs', { exact: true })).toBeVisible();
  const after = await s.server.api(logins.admin.token, 'GET', '/api/skills/3');
  if (!after.instructs || after.lastApproved.digest !== shown) throw new Error(`after approve: instructs ${after.instructs}, last approved ${after.lastApproved && after.lastApproved.digest}`);

  // The editor's slash menu lists it.
  const erika = await s.user('erika');
  await login(s, erika, 'erika');
  await startTour(s, erika, { pageTitle: 'About', language: 'English' });
  const list = await openSlashMenu(erika);
  await expect(list.getByRole('option', { name: new RegExp(skillName) })).toBeVisible();
  await s.shot(erika, 'slash-menu-lists-the-approved-skill');
});

e2e('an approval from a page another session made stale is refused and the page shows the new diff', async ({ s }) => {
  const admin = await s.user('admin');
  await login(s, admin, 'admin', { lang: 'en' });
  // An edit makes the skill wait for approval; the page shows that version.
  const first = (await s.server.api(logins.admin.token, 'GET', '/api/skills/2')).version;
  const md = await s.server.api(logins.admin.token, 'PUT', '/api/skills/2',
    { markdown: `---\nname: ${first.name}\ndescription: ${first.description}\nprocess: true\nallowed-tools: [${first.allowedTools.join(', ')}]\n---\n${first.body}\n\nErste Ergänzung.\n` });
  await openSkill(s, admin, first.name);
  const seen = await approveDigest(admin);
  if (seen !== md.digest) throw new Error(`the page shows ${seen}, the skill is at ${md.digest}`);
  await expect(admin.getByRole('list', { name: 'Changes since the last approval' }).getByRole('insertion').filter({ hasText: 'Erste Ergänzung.' })).toBeVisible();

  // Another session edits the skill meanwhile.
  const other = await s.user('admin-2');
  await login(s, other, 'admin', { lang: 'en' });
  await other.goto(`${s.server.url}/admin/skills/2`);
  const text = other.getByLabel('SKILL.md text');
  await text.fill((await text.inputValue()).replace('Erste Ergänzung.', 'Zweite, andere Ergänzung.'));
  await other.getByRole('button', { name: 'Save' }).click();
  await expect(other.getByText('Saved as a new version.')).toBeVisible();

  // The stale page's approval is refused; it says so and shows the new diff.
  await admin.getByRole('button', { name: 'Approve this version' }).click();
  await expect(admin.getByRole('alert')).toContainText('This skill was changed after you opened the page. Nothing was approved.');
  const diff = admin.getByRole('list', { name: 'Changes since the last approval' });
  await expect(diff.getByRole('insertion').filter({ hasText: 'Zweite, andere Ergänzung.' })).toBeVisible();
  await expect(diff.getByRole('insertion').filter({ hasText: 'Erste Ergänzung.' })).toHaveCount(0);
  const now = await s.server.api(logins.admin.token, 'GET', '/api/skills/2');
  const carried = await approveDigest(admin);
  if (carried !== now.digest || carried === seen) throw new Error(`after the refusal the page carries ${carried}; the skill is at ${now.digest}, the stale page had ${seen}`);
  if (now.instructs || now.approvals.some((a) => a.digest === seen || a.digest === now.digest)) {
    throw new Error(`a stale approval stored something: ${JSON.stringify(now.approvals)}`);
  }
  await s.shot(admin, 'stale-approval-refused');
});
