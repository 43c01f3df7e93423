// MCP (issue: guided tours from MCP clients): the official TypeScript SDK's
// client drives Waymark's /mcp as an editor's assistant would — the tools,
// a whole SEO tour of the demo answered by elicitation with each of the four
// answers, the same tour through answer_card, a four-eyes card released by
// the second person in the web UI, and the refusals: a foreign
// conversation, a wrong token, a bad Origin, malformed arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, logins } from '../lib/server.js';
import { e2e, expect, login } from '../lib/e2e.js';
import { connectMCP, connectStdio, call, errorCode } from '../lib/mcp.js';

const answers = ['apply', 'variant', 'skip', 'keep'];

// withDemo runs fn against a fresh demo (no browser).
function withDemo(name, fn) {
  test(name, { timeout: 180000 }, async () => {
    const server = await startDemo();
    try {
      await fn(server);
    } catch (err) {
      err.message += `\n--- waymark demo output (last lines) ---\n${server.output().split('\n').slice(-30).join('\n')}`;
      throw err;
    } finally {
      await server.stop();
    }
  });
}

// pick is the next of the four answers, in turn, that the card offers.
function picker() {
  let n = 0;
  return (offered) => {
    for (let i = 0; i < answers.length; i++) {
      const a = answers[(n + i) % answers.length];
      if (offered.includes(a)) { n = (n + i + 1) % answers.length; return a; }
    }
    return offered[0];
  };
}

withDemo('the tools are listed and a whole SEO tour is answered by elicitation', async (server) => {
  const pick = picker();
  const asked = [];
  const client = await connectMCP(server.url, logins.erika.token, {
    elicit: async (params) => {
      const offered = params.requestedSchema.properties.answer.oneOf.map((o) => o.const);
      const answer = pick(offered);
      asked.push({ answer, offered, message: params.message });
      if (asked.length > 20) return { action: 'cancel' };
      return { action: 'accept', content: { answer } };
    },
  });
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['answer_card', 'answer_question', 'end_tour', 'get_conversation',
    'list_open_points', 'list_pages', 'list_processes', 'send_message', 'start_tour']);
  const procs = await call(client, 'list_processes', {});
  assert.ok(procs.structuredContent.processes.some((p) => p.identifier === 'seo-optimieren'), JSON.stringify(procs.structuredContent));

  const res = await call(client, 'start_tour', { page: 2, language: 0, process: 'seo-optimieren' });
  assert.equal(res.isError, undefined, JSON.stringify(res.content));
  const v = res.structuredContent;
  assert.equal(v.status, 'idle', `the tour ended ${v.status}: ${res.content[0].text}`);
  assert.ok(v.summary, 'the tour has a summary');
  for (const a of answers) assert.ok(asked.some((q) => q.answer === a), `no card was answered ${a}: ${JSON.stringify(asked.map((q) => q.answer))}`);
  // Each form showed the page and the current and the proposed value (erika reads German).
  assert.match(asked[0].message, /About/);
  assert.match(asked[0].message, /Aktuell/);
  assert.match(asked[0].message, /Vorschlag/);

  // The JSON API shows the same conversation and the applied change.
  const conv = await server.api(logins.erika.token, 'GET', `/api/conversations/${v.id}`);
  assert.deepEqual(conv.summary, v.summary);
  const applied = conv.outcomes.filter((o) => o.outcome === 'applied' || o.outcome === 'check');
  assert.ok(applied.length >= 1, `outcomes ${JSON.stringify(conv.outcomes)}`);
  // The page shows each applied proposal (the form's "Vorschlag: …").
  const page = JSON.stringify(await server.api(logins.erika.token, 'GET', '/api/pages/2/preview?language=0'));
  for (const q of asked.filter((x) => x.answer === 'apply')) {
    const m = q.message.match(/Vorschlag: "((?:[^"\\]|\\.)*)"/);
    assert.ok(m, `no proposal in the form: ${q.message}`);
    const proposed = JSON.parse(`"${m[1]}"`);
    assert.ok(page.includes(JSON.stringify(proposed).slice(1, -1)), `page 2 lacks the applied ${proposed}`);
  }
  const points = await server.api(logins.erika.token, 'GET', '/api/open-points');
  const viaMCP = await call(client, 'list_open_points', {});
  assert.equal(viaMCP.structuredContent.openPoints.length, points.openPoints.length);
  await client.close();
});

withDemo('the same tour is answered through answer_card without elicitation', async (server) => {
  const pick = picker();
  const client = await connectMCP(server.url, logins.erika.token);
  let res = await call(client, 'start_tour', { page: 2, language: 0, process: 'seo-optimieren' });
  const used = [];
  for (let i = 0; res.structuredContent.status === 'awaiting_approval' && i < 20; i++) {
    const card = res.structuredContent.card;
    const answer = pick(card.answers);
    used.push(answer);
    res = await call(client, 'answer_card', { conversation: res.structuredContent.id, turnDigest: card.turnDigest, answer });
    assert.equal(res.isError, undefined, JSON.stringify(res.content));
  }
  assert.equal(res.structuredContent.status, 'idle', res.content[0].text);
  for (const a of answers) assert.ok(used.includes(a), `no card was answered ${a}: ${used}`);
  const ended = await call(client, 'end_tour', { conversation: res.structuredContent.id });
  assert.equal(ended.isError, undefined, JSON.stringify(ended.content));
  await client.close();
});

withDemo('refusals: a foreign conversation, a wrong token, a bad Origin, malformed arguments', async (server) => {
  const erika = await connectMCP(server.url, logins.erika.token);
  const started = await call(erika, 'start_tour', { page: 2, language: 0, process: 'seo-optimieren' });
  const id = started.structuredContent.id;
  const paula = await connectMCP(server.url, logins.paula.token);
  assert.equal(errorCode(await call(paula, 'get_conversation', { conversation: id })), 'not_found');
  assert.equal(errorCode(await call(paula, 'get_conversation', { conversation: 999999 })), 'not_found');
  // Malformed arguments: a clear error, nothing changed.
  const before = await server.api(logins.erika.token, 'GET', '/api/conversations');
  const bad = await call(erika, 'start_tour', { page: 'zwei', language: 0 }).catch((e) => ({ isError: true, content: [{ text: e.message }] }));
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /page/);
  const stale = await call(erika, 'answer_card', { conversation: id, turnDigest: 'nope', answer: 'apply' });
  assert.equal(errorCode(stale), 'stale_card');
  const after = await server.api(logins.erika.token, 'GET', '/api/conversations');
  assert.equal(after.conversations.length, before.conversations.length);
  // A wrong token: 401 before anything else; a bad Origin: 403.
  await assert.rejects(connectMCP(server.url, 'demo-token-nobody'), /unauthenticated/);
  await assert.rejects(connectMCP(server.url, logins.erika.token, { headers: { Origin: 'https://evil.example' } }), /bad_origin/);
  await erika.close();
  await paula.close();
});

withDemo('waymark mcp serves the same tools over stdio as the user of WAYMARK_TOKEN', async (server) => {
  const pick = picker();
  const client = await connectStdio(server.db, logins.erika.token, {
    elicit: async (params) => ({ action: 'accept', content: { answer: pick(params.requestedSchema.properties.answer.oneOf.map((o) => o.const)) } }),
  });
  try {
    const { tools } = await client.listTools();
    assert.equal(tools.length, 9);
    const res = await call(client, 'start_tour', { page: 2, language: 0, process: 'seo-optimieren' });
    assert.equal(res.structuredContent?.status, 'idle', `${res.content[0].text}\n--- waymark mcp log ---\n${client.stderr().slice(-2000)}`);
    // The demo server (another process on the same database) shows erika the tour.
    const conv = await server.api(logins.erika.token, 'GET', `/api/conversations/${res.structuredContent.id}`);
    assert.deepEqual(conv.summary, res.structuredContent.summary);
  } finally {
    await client.close();
  }
  // A token that names nobody: the command refuses to serve.
  await assert.rejects(connectStdio(server.db, 'demo-token-nobody'));
});

e2e('a four-eyes card started over MCP is released by the second person in the web UI', async ({ s, server }) => {
  const erika = await connectMCP(server.url, logins.erika.token, {
    elicit: async () => { throw new Error('a four-eyes card was elicited from its requester'); },
  });
  const res = await call(erika, 'start_tour', { page: 2, language: 0, configuration: 2, message: 'Bitte verbessere Seite 2.' });
  const v = res.structuredContent;
  assert.equal(v.status, 'awaiting_approval', res.content[0].text);
  assert.match(res.content[0].text, /Eine zweite Person muss diese Änderung freigeben/);
  const description = v.card.calls[0].preview[0].proposed;

  const paula = await s.user('paula');
  await login(s, paula, 'paula', { lang: 'en' });
  await paula.goto(`${server.url}/inbox`);
  await expect(paula.getByRole('article')).toContainText(description);
  await paula.getByRole('button', { name: 'Release' }).click();
  await expect(paula.getByText('Released.')).toBeVisible();
  await s.shot(paula, 'mcp-four-eyes-released');

  const after = await call(erika, 'get_conversation', { conversation: v.id, after: v.updatedAt });
  assert.ok(after.structuredContent, JSON.stringify(after));
  const a = after.structuredContent;
  assert.notEqual(a.card?.turnDigest, v.card.turnDigest, `the released card still waits: ${after.content[0].text}`);
  const told = a.messages.some((m) => (m.notice || '').startsWith('approved_elsewhere')) || a.outcomes.some((o) => o.outcome === 'applied');
  assert.ok(told, `the release is not told: ${JSON.stringify(a.messages)} ${JSON.stringify(a.outcomes)}`);
  const page = await server.api(logins.erika.token, 'GET', '/api/pages/2/preview?language=0');
  assert.ok(JSON.stringify(page).includes(description), `page 2 lacks the released text ${description}`);
  await erika.close();
});
