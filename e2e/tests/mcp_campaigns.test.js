// Campaigns from an MCP client: the official TypeScript SDK's client, as
// erika's assistant, starts a campaign over the demo's guide branch with
// start_campaign, follows it with get_campaign until its pages wait with
// cards, pages and filters the review list with list_campaign_cards,
// answers two cards with apply and one with skip through
// answer_campaign_cards — one result per card — and reads each card's
// conversation with the tour tools. The bad inputs are each a tool error
// with the API's stable code that changes nothing: an unknown process or
// page, a depth or concurrency out of range, a budget that is not a
// number, an instruction with text the database cannot store, and cards of
// another campaign or of another user, answered like unknown ones. The
// client lists the tools first, so it checks every result's
// structuredContent against the tool's outputSchema — the refusals too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, logins } from '../lib/server.js';
import { connectMCP, call, errorCode } from '../lib/mcp.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const campaignTools = ['answer_campaign_cards', 'get_campaign', 'list_campaign_cards', 'start_campaign'];
const guide = 1000; // the demo's guide branch (internal/demo/branch.go): 200 pages below it, half without a description

// connect connects as token and lists the tools, after which the SDK client
// validates each tool's structuredContent against its outputSchema.
async function connect(server, token) {
  const client = await connectMCP(server.url, token);
  const { tools } = await client.listTools();
  for (const name of campaignTools) {
    const t = tools.find((x) => x.name === name);
    assert.ok(t, `no tool ${name}`);
    assert.equal(t.outputSchema?.type, 'object', `${name} declares no output schema`);
    // The client checks the tool's answers against it from now on; a
    // structured content without the result's fields would not pass.
    const check = client.getToolOutputValidator(name);
    assert.ok(check, `the client does not check ${name}'s answers`);
    assert.equal(check({}).valid, false, `${name}'s output schema admits {}`);
    assert.equal(check({ error: { code: 'not_found', message: 'x' } }).valid, true, `${name}'s output schema refuses a refusal`);
  }
  return client;
}

// ok calls a tool that must succeed and returns its structured content.
async function ok(client, name, args) {
  const res = await call(client, name, args);
  assert.equal(res.isError, undefined, `${name} ${JSON.stringify(args)}: ${JSON.stringify(res.content)}`);
  assert.ok(res.structuredContent, `${name}: no structured content`);
  return res.structuredContent;
}

// refused calls a tool that must be refused with code; the error is a
// tool error with the code in structuredContent.error and in its text.
async function refused(client, name, args, code, what) {
  const res = await call(client, name, args);
  assert.equal(errorCode(res), code, `${what}: ${JSON.stringify(res)}`);
  assert.ok(res.structuredContent.error.message, `${what}: no message`);
  assert.match(res.content[0].text, new RegExp(`^${code}: `), what);
  return res;
}

// waitingCards is the review list as (conversation, turnDigest, page,
// proposal), read through the JSON API: what the bad inputs must leave alone.
async function waitingCards(server, token, id) {
  const list = await server.api(token, 'GET', `/api/campaigns/${id}/cards?limit=200`);
  return list.cards.map((c) => `${c.conversation} ${c.turnDigest} ${c.page} ${c.fields.map((f) => f.proposed).join('|')}`).sort();
}

// description is the page's description as the page shows it now.
async function description(server, page) {
  return (await server.api(logins.erika.token, 'GET', `/api/pages/${page}/preview?language=0`)).description;
}

test('a campaign is started, followed, reviewed and answered through the MCP tools; bad input changes nothing', { timeout: 360000 }, async () => {
  const server = await startDemo();
  try {
    const erika = await connect(server, logins.erika.token);
    const paula = await connect(server, logins.paula.token);

    // Bad starts: a clear refusal each, and no campaign.
    const start = { process: 'seo-optimieren', rootPage: guide, depth: 1, filter: 'descriptionMissing' };
    for (const [what, args, code] of [
      ['an unknown process', { ...start, process: 'gibt-es-nicht' }, 'skill_unavailable'],
      ['an unknown page', { ...start, rootPage: 999999 }, 'not_found'],
      ['a depth above the range', { ...start, depth: 11 }, 'bad_request'],
      ['a negative depth', { ...start, depth: -1 }, 'bad_request'],
      ['a concurrency above the range', { ...start, concurrency: 9 }, 'bad_request'],
      ['a negative concurrency', { ...start, concurrency: -1 }, 'bad_request'],
      ['a budget that is not a number', { ...start, budget: 'viel' }, 'bad_request'],
      ['a negative budget', { ...start, budget: -1 }, 'bad_request'],
      ['a depth that is not a whole number', { ...start, depth: 1.5 }, 'bad_request'],
      ['a NUL byte in the process', { ...start, process: 'seo\u0000' }, 'invalid_text'],
    ]) {
      await refused(erika, 'start_campaign', args, code, what);
    }
    assert.deepEqual((await server.api(logins.erika.token, 'GET', '/api/campaigns')).campaigns, [], 'a refused start made a campaign');

    // The campaign: the branch's pages without a description.
    const started = await ok(erika, 'start_campaign', { ...start, concurrency: 4, budget: 5 });
    assert.equal(started.state, 'running');
    assert.equal(started.counts.total, 100, JSON.stringify(started.counts));
    const id = started.id;

    let v = started;
    const deadline = Date.now() + 120000;
    while (v.counts.proposals < 4) {
      assert.ok(Date.now() < deadline, `no four pages with cards within 120 s: ${JSON.stringify(v)}`);
      await sleep(200);
      v = await ok(erika, 'get_campaign', { campaign: id });
      assert.equal(v.id, id);
      assert.equal(v.counts.failed, 0, JSON.stringify(v.counts));
    }
    // Pause it so the list holds still while it is paged: a paused
    // campaign moves no page on to the review list.
    await server.api(logins.erika.token, 'POST', `/api/campaigns/${id}/pause`);
    v = await ok(erika, 'get_campaign', { campaign: id });
    assert.equal(v.state, 'paused');

    // The review list, paged and filtered.
    const all = await ok(erika, 'list_campaign_cards', { campaign: id, limit: 200 });
    assert.ok(all.total >= 4 && all.cards.length === all.total, `cards: ${all.total}, ${all.cards.length} listed`);
    const first = await ok(erika, 'list_campaign_cards', { campaign: id, limit: 2 });
    const second = await ok(erika, 'list_campaign_cards', { campaign: id, offset: 2, limit: 2 });
    assert.equal(first.total, all.total);
    assert.equal(second.total, all.total);
    assert.deepEqual([...first.cards, ...second.cards].map((c) => c.conversation), all.cards.slice(0, 4).map((c) => c.conversation));
    assert.equal(first.limit, 2);
    assert.equal(second.offset, 2);
    for (const c of all.cards) {
      assert.ok(c.page > guide && c.page <= guide + 200, `card of page ${c.page} outside the branch`);
      assert.ok(c.turnDigest && c.answers.includes('apply') && c.answers.includes('skip'), JSON.stringify(c));
      assert.equal(c.fields[0].field, 'description');
      assert.equal(c.fields[0].current, '');
      assert.ok(c.fields[0].proposed, `card of page ${c.page} proposes nothing`);
    }
    const byPage = await ok(erika, 'list_campaign_cards', { campaign: id, page: all.cards[1].page });
    assert.deepEqual(byPage.cards.map((c) => c.conversation), [all.cards[1].conversation]);
    const byField = await ok(erika, 'list_campaign_cards', { campaign: id, field: 'description', limit: 200 });
    assert.equal(byField.total, all.total);
    const byKind = await ok(erika, 'list_campaign_cards', { campaign: id, kind: all.cards[0].kind, limit: 200 });
    assert.equal(byKind.total, all.total);
    const none = await ok(erika, 'list_campaign_cards', { campaign: id, field: 'gibt-es-nicht' });
    assert.deepEqual([none.total, none.cards], [0, []]);
    const past = await ok(erika, 'list_campaign_cards', { campaign: id, offset: all.total });
    assert.deepEqual([past.total, past.cards], [all.total, []]);
    await refused(erika, 'list_campaign_cards', { campaign: id, limit: 201 }, 'bad_request', 'a limit above the range');
    await refused(erika, 'list_campaign_cards', { campaign: id, offset: -1 }, 'bad_request', 'a negative offset');

    const [a, b, c] = all.cards;
    const ref = (x) => ({ conversation: x.conversation, turnDigest: x.turnDigest });
    const descriptions = {};
    for (const x of all.cards) descriptions[x.page] = await description(server, x.page);
    const before = await waitingCards(server, logins.erika.token, id);

    // Bad answers: each refused with its code, every card still waits as it did.
    for (const [what, args, code] of [
      ['an instruction with a NUL byte', { campaign: id, answer: 'variant', instruction: 'k\u0000rzer', cards: [ref(a)] }, 'invalid_text'],
      ['an answer the cards do not take', { campaign: id, answer: 'approve', cards: [ref(a)] }, 'bad_request'],
      ['no cards', { campaign: id, answer: 'apply', cards: [] }, 'bad_request'],
      ['an instruction without a variant', { campaign: id, answer: 'skip', instruction: 'kürzer', cards: [ref(a)] }, 'bad_request'],
      ['an instruction too long', { campaign: id, answer: 'variant', instruction: 'x'.repeat(501), cards: [ref(a)] }, 'bad_request'],
      ['an unknown campaign', { campaign: 999999, answer: 'apply', cards: [ref(a)] }, 'not_found'],
      ['cards that are not a list', { campaign: id, answer: 'apply', cards: 'alle' }, 'bad_request'],
    ]) {
      await refused(erika, 'answer_campaign_cards', args, code, what);
    }
    // Another user: erika's campaign is unknown to paula, in every tool.
    await refused(paula, 'answer_campaign_cards', { campaign: id, answer: 'apply', cards: [ref(a), ref(b)] }, 'not_found', "paula answers erika's campaign");
    await refused(paula, 'get_campaign', { campaign: id }, 'not_found', "paula reads erika's campaign");
    await refused(paula, 'list_campaign_cards', { campaign: id }, 'not_found', "paula lists erika's cards");
    // Erika's cards named in paula's own campaign, and in another campaign
    // of erika's: refused like unknown cards, one result each.
    const paulas = await ok(paula, 'start_campaign', { process: 'seo-optimieren', rootPage: 7 });
    const foreign = await ok(paula, 'answer_campaign_cards', { campaign: paulas.id, answer: 'apply', cards: [ref(a), ref(b)] });
    assert.deepEqual(foreign.results.map((r) => [r.conversation, r.outcome, r.code]),
      [[a.conversation, 'refused', 'not_found'], [b.conversation, 'refused', 'not_found']]);
    const other = await ok(erika, 'start_campaign', { process: 'seo-optimieren', rootPage: 7 });
    const elsewhere = await ok(erika, 'answer_campaign_cards', { campaign: other.id, answer: 'skip', cards: [ref(c)] });
    assert.deepEqual(elsewhere.results.map((r) => [r.conversation, r.outcome, r.code]), [[c.conversation, 'refused', 'not_found']]);
    assert.deepEqual(await waitingCards(server, logins.erika.token, id), before, 'a refused answer changed a card');
    for (const x of all.cards) assert.equal(await description(server, x.page), descriptions[x.page], `page ${x.page} changed`);

    // Two cards applied together, one skipped: one result per card.
    const applied = await ok(erika, 'answer_campaign_cards', { campaign: id, answer: 'apply', cards: [ref(a), ref(b)] });
    assert.deepEqual(applied.results.map((r) => [r.conversation, r.turnDigest, r.outcome]),
      [[a.conversation, a.turnDigest, 'answered'], [b.conversation, b.turnDigest, 'answered']]);
    const skipped = await ok(erika, 'answer_campaign_cards', { campaign: id, answer: 'skip', cards: [ref(c)] });
    assert.deepEqual(skipped.results.map((r) => [r.conversation, r.outcome]), [[c.conversation, 'answered']]);
    // The same cards again: each named as stale, nothing repeated.
    const again = await ok(erika, 'answer_campaign_cards', { campaign: id, answer: 'apply', cards: [ref(a), ref(c)] });
    assert.deepEqual(again.results.map((r) => [r.conversation, r.outcome, r.code]),
      [[a.conversation, 'refused', 'stale_card'], [c.conversation, 'refused', 'stale_card']]);

    // Each card's conversation, read with the tour tools: the answer is
    // carried out, and the tour waits at its next card or has ended.
    for (const [x, outcome] of [[a, 'applied'], [b, 'applied'], [c, 'skipped']]) {
      let conv = await ok(erika, 'get_conversation', { conversation: x.conversation });
      for (let i = 0; i < 20 && (conv.status === 'processing' || !(conv.outcomes ?? []).length); i++) {
        conv = await ok(erika, 'get_conversation', { conversation: x.conversation, after: conv.updatedAt });
      }
      assert.deepEqual((conv.outcomes ?? []).map((o) => o.outcome), [outcome], `conversation ${x.conversation}: ${JSON.stringify(conv.outcomes)}`);
      assert.notEqual(conv.card?.turnDigest, x.turnDigest, `conversation ${x.conversation} still waits at the answered card`);
      assert.equal(conv.page, x.page);
    }
    for (const x of [a, b]) {
      assert.equal(await description(server, x.page), x.fields[0].proposed, `page ${x.page} lacks its applied description`);
    }
    assert.equal(await description(server, c.page), descriptions[c.page], `the skipped page ${c.page} was written`);
    const left = await ok(erika, 'list_campaign_cards', { campaign: id, limit: 200 });
    for (const x of [a, b, c]) {
      assert.ok(!left.cards.some((y) => y.conversation === x.conversation && y.turnDigest === x.turnDigest), `the answered card of page ${x.page} is still listed`);
    }
    await erika.close();
    await paula.close();
  } catch (err) {
    err.message += `\n--- waymark demo output (last lines) ---\n${server.output().split('\n').slice(-30).join('\n')}`;
    throw err;
  } finally {
    await server.stop();
  }
});
