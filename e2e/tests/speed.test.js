// Speed figures measured in the browser: the chat page's server time with
// 200 messages in the conversation, and its first paint.
import { e2e, expect, login, logins, speed, firstPaint, serverTime } from '../lib/e2e.js';
import { until } from '../lib/expect.js';

e2e('speed: the chat page with 200 messages is served within 50 ms and paints within 300 ms', async ({ s, server }) => {
  const token = logins.erika.token;
  const conv = await server.api(token, 'POST', '/api/conversations', { page: 2, language: 0 });
  const page = await s.user('erika');
  // 100 turns of the free chat: each a message and the demo model's answer.
  for (let i = 0; i < 100; i++) {
    await server.api(token, 'POST', `/api/conversations/${conv.id}/messages`, { content: `Frage ${i + 1}: was kannst du?` });
    await until(page, async () => (await server.api(token, 'GET', `/api/conversations/${conv.id}`)).status === 'idle', `turn ${i + 1} to end`, 20000);
  }
  const c = await server.api(token, 'GET', `/api/conversations/${conv.id}`);
  if (c.messages.length !== 200) throw new Error(`the conversation has ${c.messages.length} messages, want 200`);

  await login(s, page, 'erika');
  const times = [];
  let paint = 0;
  for (let i = 0; i < 5; i++) {
    await page.goto(`${server.url}/chat/${conv.id}`);
    await expect(page.getByText('Frage 100: was kannst du?')).toBeVisible();
    times.push(await serverTime(page));
    paint = Math.max(paint, await firstPaint(page));
  }
  times.sort((a, b) => a - b);
  await s.shot(page, 'chat-200-messages');
  const ok = speed('chat page server time with 200 messages (median of 5)', times[2], 'ms', 50);
  speed('first paint: chat with 200 messages (worst of 5)', paint, 'ms', 300);
  if (!ok) throw new Error(`the chat page took ${times[2]} ms on the server with 200 messages (limit 50 ms)`);
});
