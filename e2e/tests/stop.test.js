// Stopp while the reply streams (screen 2): pressed at human speed by mouse
// or keyboard while the text streams in, it works every time. It stays where
// it is (the same element, at the same place) and keeps the focus while the
// text grows; the partial reply stays in the transcript, marked as stopped.
import { e2e, expect, login, logins } from '../lib/e2e.js';
import { until } from '../lib/expect.js';
import { startTour, conversation } from '../lib/chat.js';

const stoppedText = 'Angehalten. Die Antwort wurde abgebrochen';

e2e('Stopp works on every press by mouse and keyboard while the reply streams, and the partial reply stays marked as stopped', async ({ s }) => {
  const page = await s.user('erika');
  await login(s, page, 'erika');
  const id = await startTour(s, page, { pageTitle: 'About', language: 'English' });
  const box = page.getByRole('combobox', { name: 'Nachricht' });
  const send = page.getByRole('button', { name: 'Senden' });
  const stop = page.getByRole('button', { name: 'Stopp' });
  const streaming = page.locator('#conversation .message.assistant.streaming .text');
  const streamed = async () => ((await streaming.count()) ? (await streaming.first().innerText()).trim() : '');
  const stoppedLines = page.getByText(stoppedText);
  s.onFailure(async () => `conversation ${id}: ${JSON.stringify((await conversation(s, id)).messages.slice(-3))}`);

  // One turn: send, wait until a part of the reply is in and more streams
  // after it (the region is being updated), then press Stopp with press().
  // A press is lost when the turn is not stopped within 3 s of it.
  const lost = [];
  const moved = [];
  const partials = [];
  const turn = async (label, press) => {
    const before = await stoppedLines.count();
    await expect(send).toBeEnabled();
    await box.fill('Was kannst du?');
    await send.click();
    await expect(stop).toBeVisible();
    await until(page, async () => (await streamed()).split(' ').length >= 3, 'a part of the reply to stream in');
    const seen = await streamed();
    await press(seen);
    const ok = await until(page, async () => (await stoppedLines.count()) > before, `${label} to stop the turn`, 3000).then(() => true, () => false);
    if (!ok) {
      lost.push(label);
      // Stopped through the API instead, before the next press.
      await s.server.api(logins.erika.token, 'POST', `/api/conversations/${id}/stop`).catch(() => {});
      await until(page, async () => (await conversation(s, id)).status === 'idle', 'the turn to end', 10000);
      await expect(send).toBeEnabled();
      return;
    }
    partials.push(seen);
    await expect(stop).toBeHidden();
  };

  // Mouse: the pointer goes to Stopp and holds the button down until more
  // text has streamed in (at human speed that is 100–300 ms), then lets go.
  for (let i = 1; i <= 12; i++) {
    await turn(`mouse press ${i}`, async (seen) => {
      const b = await stop.boundingBox();
      const handle = await stop.elementHandle();
      await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
      await page.mouse.down();
      await until(page, async () => (await streamed()).length > seen.length || (await stoppedLines.count()) > 0 && !(await stop.isVisible()),
        'more of the reply while the button is held down', 3000).catch(() => {});
      const still = await handle.evaluate((el) => el.isConnected);
      const a = await stop.boundingBox().catch(() => null);
      if (!still || !a || Math.abs(a.x - b.x) > 1 || Math.abs(a.y - b.y) > 1) moved.push(`mouse press ${i}: ${JSON.stringify(b)} → ${still ? JSON.stringify(a) : 'replaced'}`);
      await page.mouse.up();
    });
  }
  // Keyboard: Stopp has the focus; it keeps it while two more words stream
  // in; then Enter or Space.
  for (let i = 1; i <= 4; i++) {
    await turn(`keyboard press ${i}`, async (seen) => {
      await stop.focus();
      const words = seen.split(' ').length;
      await until(page, async () => (await streamed()).split(' ').length >= words + 2, 'two more words of the reply', 5000).catch(() => {});
      const focused = await stop.evaluate((el) => el === document.activeElement).catch(() => false);
      if (!focused) moved.push(`keyboard press ${i}: the focus left Stopp while the reply streamed (now on ${await page.evaluate(() => document.activeElement && document.activeElement.outerHTML.slice(0, 60))})`);
      await page.keyboard.press(i % 2 ? 'Enter' : 'Space');
    });
    if (!lost.includes(`keyboard press ${i}`)) {
      // The focus goes on to the message box, not to the page's start.
      await expect(box).toBeFocused();
    }
  }
  await s.shot(page, 'stopped-with-partial-reply');
  if (lost.length || moved.length) {
    throw new Error(`${lost.length} of 16 presses of Stopp were lost (${lost.join(', ')}); Stopp moved or lost the focus: ${moved.join('; ') || 'never'}`);
  }

  // Each stopped turn keeps the part of the reply that had streamed in, marked as stopped.
  const c = await conversation(s, id);
  const stopped = c.messages.filter((m) => m.role === 'assistant' && m.notice === 'stopped');
  if (stopped.length !== 16) throw new Error(`${stopped.length} stopped replies recorded, want 16: ${JSON.stringify(c.messages.slice(-4))}`);
  stopped.forEach((m, i) => {
    if (!m.content || !m.content.startsWith(partials[i].split(' ')[0]) || m.content.length < partials[i].length) {
      throw new Error(`stopped reply ${i + 1} = ${JSON.stringify(m.content)}, want at least ${JSON.stringify(partials[i])}`);
    }
  });
  const last = page.locator('#conversation .message.assistant').last();
  await expect(last).toContainText(stoppedText);
  await expect(last).toContainText(partials[15]);
}, { demoArgs: ['--demo-pace', '200ms'] });
