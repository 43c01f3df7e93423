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

// withDemo runs fn against a fresh demo (no browser); args are more
// options of `waymark demo`.
function withDemo(name, fn, { args = [], timeout = 180000 } = {}) {
  test(name, { timeout }, async () => {
    const server = await startDemo({ args });
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
  assert.deepEqual(tools.map((t) => t.name).sort(), ['answer_campaign_cards', 'answer_card', 'answer_question', 'end_tour', 'estimate_campaign', 'get_campaign', 'get_conversation',
    'list_campaign_cards', 'list_conversations', 'list_inbox', 'list_open_points', 'list_pages', 'list_processes', 'release_card', 'resume_tour',
    'send_message', 'start_campaign', 'start_tour']);
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
    assert.equal(tools.length, 18);
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

// MCP at human speed. A person may take minutes on a form. The mechanism is
// the real one with shortened times: the client's request timeout is 3 s
// (the TypeScript SDK's default is 60 s), the demo sends progress every 1 s
// (--mcp-form-progress; default 15 s) and the person holds the form
// formHold ms — 10 s by default, over three timeouts; set
// WAYMARK_E2E_FORM_HOLD_MS=300000 for the real five minutes.
const formHold = Number(process.env.WAYMARK_E2E_FORM_HOLD_MS ?? 10000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

withDemo('a form held open far past the request timeout is carried out: progress resets the timeout', async (server) => {
  const forms = [];
  const client = await connectMCP(server.url, logins.erika.token, {
    elicit: async (params) => {
      const offered = params.requestedSchema.properties.answer.oneOf.map((o) => o.const);
      forms.push(offered);
      if (forms.length > 1) return { action: 'cancel' }; // the second card: later
      await sleep(formHold); // the person reads the first card for a while
      return { action: 'accept', content: { answer: offered.includes('apply') ? 'apply' : offered[0] } };
    },
  });
  const progress = [];
  const started = Date.now();
  const res = await client.callTool({ name: 'start_tour', arguments: { page: 2, language: 0, process: 'seo-optimieren' } }, undefined,
    { timeout: 3000, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p) });
  const took = Date.now() - started;
  assert.equal(res.isError, undefined, JSON.stringify(res.content));
  assert.ok(took >= formHold, `the call returned after ${took} ms, before the form was answered`);
  assert.ok(progress.filter((p) => /form/.test(p.message ?? '')).length >= Math.floor(formHold / 1000) - 2,
    `${progress.length} progress notifications over ${took} ms`);
  const conv = await server.api(logins.erika.token, 'GET', `/api/conversations/${res.structuredContent.id}`);
  assert.equal(conv.outcomes.length, 1, `outcomes ${JSON.stringify(conv.outcomes)}`);
  assert.equal(forms.length, 2, 'the tour went on to the second card');
  await client.close();
}, { args: ['--mcp-form-progress', '1s'], timeout: formHold + 180000 });

withDemo('an answer given after the client gave up is carried out, and resume_tour asks the next card', async (server) => {
  let gaveUp;
  const gone = new Promise((r) => { gaveUp = r; });
  const client = await connectMCP(server.url, logins.erika.token, {
    elicit: async (params) => {
      const offered = params.requestedSchema.properties.answer.oneOf.map((o) => o.const);
      await gone; // the client's request timeout ended the call first
      await sleep(1000);
      return { action: 'accept', content: { answer: offered.includes('apply') ? 'apply' : offered[0] } };
    },
  });
  const failed = await client.callTool({ name: 'start_tour', arguments: { page: 2, language: 0, process: 'seo-optimieren' } }, undefined,
    { timeout: 3000 }).then(() => null, (err) => err);
  assert.ok(failed, 'start_tour returned before its form was answered');
  assert.match(String(failed.message), /timed out|timeout/i);
  gaveUp();
  const { conversations } = await server.api(logins.erika.token, 'GET', '/api/conversations');
  assert.equal(conversations.length, 1);
  const id = conversations[0].id;
  let conv;
  for (let i = 0; i < 200; i++) {
    conv = await server.api(logins.erika.token, 'GET', `/api/conversations/${id}`);
    if (conv.outcomes?.length && conv.status !== 'processing') break;
    await sleep(100);
  }
  assert.equal(conv.outcomes?.length, 1, `the late answer was not carried out: ${JSON.stringify(conv)}`);
  assert.equal(conv.status, 'awaiting_approval', 'the next card waits');

  // The tour goes on card by card: resume_tour asks the next card.
  const asked = [];
  const again = await connectMCP(server.url, logins.erika.token, {
    elicit: async (params) => { asked.push(params.message); return { action: 'decline' }; },
  });
  const resumed = await call(again, 'resume_tour', { conversation: id });
  assert.equal(resumed.isError, undefined, JSON.stringify(resumed.content));
  assert.equal(asked.length, 1, 'resume_tour asked the waiting card');
  assert.equal(resumed.structuredContent.card.turnDigest, conv.card.turnDigest);
  const listed = await call(again, 'list_conversations', {});
  assert.deepEqual(listed.structuredContent.conversations.map((c) => c.id), [id]);
  const { resources } = await again.listResources();
  assert.deepEqual(resources.map((r) => r.uri), [`waymark://conversations/${id}`]);
  await client.close();
  await again.close();
}, { args: ['--mcp-form-progress', '1s'] });
