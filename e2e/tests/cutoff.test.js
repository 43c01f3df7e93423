// Cut off from the server (screen 2, connection line): in an 800 px high
// window with a card waiting, "Keine Verbindung" and "Sitzung abgelaufen"
// are shown inside the window — not below the
// composer, out of sight — and the card's buttons and Senden are disabled
// while they hold; once the server answers again they work. ("Verbindung
// unterbrochen", the live stream broken, takes the same way in app.js:
// notice(…, cut); a browser here cannot cut an open stream.)
import { e2e, expect, login } from '../lib/e2e.js';
import { until } from '../lib/expect.js';
import { startTour, card } from '../lib/chat.js';

function allow(s, ...patterns) {
  s.problems = s.problems.filter((p) => !patterns.some((re) => re.test(p)));
}

const answers = ['Übernehmen', 'Andere Variante', 'Überspringen', 'Behalten'];

// cutOff checks that the alert with text is inside the window and that every
// answer of the card and Senden are disabled.
async function cutOff(s, page, text, name) {
  const alert = page.getByRole('alert').filter({ hasText: text });
  await expect(alert).toBeVisible();
  await expect(alert).toBeScrolledIntoView();
  for (const a of answers) await expect(card(page).getByRole('button', { name: a, exact: true })).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Senden' })).toBeDisabled();
  await s.shot(page, name);
}

async function working(page) {
  await until(page, async () => !(await page.locator('#connection').isVisible()), 'the message to go once the server answers');
  for (const a of answers) await expect(card(page).getByRole('button', { name: a, exact: true })).toBeEnabled();
  await expect(page.getByRole('button', { name: 'Senden' })).toBeEnabled();
}

e2e('cut off from the server: each message is in an 800 px window and the card cannot be answered meanwhile', async ({ s, server }) => {
  const page = await s.user('erika', { viewport: { width: 1280, height: 800 } });
  await login(s, page, 'erika');
  await startTour(s, page, { pageTitle: 'About', language: 'English', process: 'SEO optimieren' });
  const skip = card(page).getByRole('button', { name: 'Überspringen', exact: true });
  await expect(skip).toBeVisible();
  // The editor reads the card: the composer below is out of the window.
  await until(page, async () => {
    await card(page).getByRole('heading').first().scrollIntoViewIfNeeded({ timeout: 500 });
    return true;
  }, 'the card scrolled into view');

  // An answer that does not reach the server (nor does the page's probe).
  const away = (route) => route.abort('internetdisconnected');
  await page.route('**/chat/*/answer', away);
  await page.route('**/readyz', away);
  await skip.click();
  await cutOff(s, page, 'Keine Verbindung zum Server', 'offline');
  await page.unroute('**/chat/*/answer');
  await page.unroute('**/readyz');
  await working(page);

  // The session ends in another tab; the answer comes back 401.
  const other = await page.context().newPage();
  await other.goto(`${server.url}/chat`);
  await other.getByRole('button', { name: 'Abmelden' }).click();
  await other.close();
  // The live stream may learn it first (then the card is disabled already);
  // else the answer does.
  await skip.click({ timeout: 2000 }).catch(() => {});
  await cutOff(s, page, 'Deine Sitzung ist abgelaufen', 'session-ended');
  allow(s, /ERR_INTERNET_DISCONNECTED/, /ERR_NETWORK_CHANGED/, /htmx:sendError/, /htmx:afterRequest/, /status of 401/, /ERR_FAILED/);
});
