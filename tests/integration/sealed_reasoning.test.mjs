// Reasoning state an OpenAI Responses caller keeps across turns (store: false, include
// reasoning.encrypted_content, as Codex runs) when its upstream speaks another protocol: the
// upstream's signature comes back sealed by the gateway, opens to the same signature on the next
// turn to an upstream of that kind, and reaches no other kind. A forged or altered value, or an
// OpenAI upstream's own encrypted_content, is never sent where it would fail the turn.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  collectSse,
  fixturesDir,
  gatewayConfig,
  postJson,
  readFixture,
  useStack,
} from '../support/harness.mjs';

const PREFIX = 'sluice:r1:';
const THINKING = JSON.parse(readFixture('anthropic/message-thinking.json'));
const RAW_SIGNATURE = THINKING.content.find((b) => b.type === 'thinking').signature;

let gw;
let mock;

useStack(
  {
    mockOpts: { fixtures: `${fixturesDir}/anthropic` },
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl, {
        server: { reasoning_seal_key: 'integration-tests-seal-key-0000000000' },
      });
      const net = (id, adapter, baseUrl) => ({
        id,
        adapter,
        base_url: baseUrl,
        api_key: PROVIDER_KEY,
        forward_headers: ['x-mock-*'],
      });
      cfg.providers.push(net('claude', 'anthropic', m.baseUrl), net('gem', 'gemini', `${m.url}/v1beta`));
      cfg.routes.push(
        { alias: 'claude-test', provider: 'claude', model: 'claude-sonnet-4-5' },
        { alias: 'gemini-test', provider: 'gem', model: 'gemini-2.5-flash' },
      );
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

const lastBody = async () => JSON.parse((await mock.stats()).last_request.body);

function turn(model, history, extra = {}) {
  return {
    model,
    store: false,
    include: ['reasoning.encrypted_content'],
    input: [
      { role: 'user', content: 'What is 925 / 5?' },
      ...history,
      { role: 'user', content: 'And times two?' },
    ],
    ...extra,
  };
}

async function firstTurn() {
  const res = await postJson(gw, '/v1/responses', turn('claude-test', []), {
    headers: { 'x-mock-fixture': 'message-thinking.json' },
  });
  assert.equal(res.status, 200, res.text);
  return res.json.output;
}

const thinkingBlocks = (body) =>
  body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'thinking');

describe('sealed reasoning state for Responses callers', () => {
  test("an Anthropic upstream's signature comes back sealed and opens to itself on the next turn", async () => {
    const output = await firstTurn();
    const reasoning = output.find((i) => i.type === 'reasoning');
    assert.ok(reasoning.encrypted_content.startsWith(PREFIX), reasoning.encrypted_content);
    assert.ok(!reasoning.encrypted_content.includes(RAW_SIGNATURE.slice(0, 24)), 'the raw signature is not readable');
    assert.equal(reasoning.summary[0].text, '925 divided by 5 = 185');

    const res = await postJson(gw, '/v1/responses', turn('claude-test', output));
    assert.equal(res.status, 200, res.text);
    const blocks = thinkingBlocks(await lastBody());
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0].signature, RAW_SIGNATURE);
    assert.equal(blocks[0].thinking, '925 divided by 5 = 185');
  });

  test('a stream seals the signature the same way', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${GATEWAY_KEY}`,
        'content-type': 'application/json',
        'x-mock-fixture': 'stream-thinking-signature.sse',
      },
      body: JSON.stringify(turn('claude-test', [], { stream: true })),
    });
    assert.equal(res.status, 200);
    const { events } = await collectSse(res);
    const done = events
      .filter((e) => e.data)
      .map((e) => JSON.parse(e.data))
      .filter((e) => e.type === 'response.output_item.done' && e.item.type === 'reasoning');
    assert.equal(done.length, 1);
    const sealed = done[0].item.encrypted_content;
    assert.ok(sealed.startsWith(PREFIX), sealed);

    const next = await postJson(gw, '/v1/responses', turn('claude-test', [done[0].item]));
    assert.equal(next.status, 200, next.text);
    const [block] = thinkingBlocks(await lastBody());
    assert.ok(block.signature.startsWith('EvMCCkYICxgCKkCHP2cSuEdcJK'), block.signature);
  });

  test('an altered sealed value never reaches the upstream, and the turn still succeeds', async () => {
    const output = await firstTurn();
    const reasoning = output.find((i) => i.type === 'reasoning');
    const flipped = reasoning.encrypted_content.endsWith('A') ? 'B' : 'A';
    reasoning.encrypted_content = reasoning.encrypted_content.slice(0, -1) + flipped;
    const res = await postJson(gw, '/v1/responses', turn('claude-test', output));
    assert.equal(res.status, 200, res.text);
    const body = await lastBody();
    assert.deepEqual(thinkingBlocks(body), []);
    assert.ok(!JSON.stringify(body).includes(PREFIX));
  });

  test("an OpenAI upstream's own encrypted_content is not sent to Anthropic as a signature", async () => {
    const history = [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAABo-openai-own-state' },
      { role: 'assistant', content: [{ type: 'output_text', text: '185' }] },
    ];
    const res = await postJson(gw, '/v1/responses', turn('claude-test', history));
    assert.equal(res.status, 200, res.text);
    const body = JSON.stringify(await lastBody());
    assert.ok(!body.includes('gAAAAABo'), body);
    assert.ok(!body.includes('redacted_thinking'), body);
  });

  test('a turn that moves to another kind of upstream leaves the Claude reasoning out', async () => {
    const output = await firstTurn();
    const res = await postJson(gw, '/v1/responses', turn('gemini-test', output));
    assert.equal(res.status, 200, res.text);
    const body = JSON.stringify(await lastBody());
    assert.ok(!body.includes(RAW_SIGNATURE.slice(0, 24)), body);
    assert.ok(!body.includes(PREFIX), body);
    assert.ok(!body.includes('thoughtSignature'), body);
  });

  test('a Responses upstream gets the conversation without the items the gateway sealed', async () => {
    const output = await firstTurn();
    const res = await postJson(gw, '/v1/responses', turn('gpt-test', output));
    assert.equal(res.status, 200, res.text);
    const sent = await lastBody();
    assert.equal(sent.model, 'mock-model');
    assert.deepEqual(
      sent.input.map((i) => i.type ?? i.role),
      ['user', 'message', 'user'],
      JSON.stringify(sent.input),
    );
    assert.ok(!JSON.stringify(sent).includes(PREFIX));
  });

  test("without sealed items a Responses upstream gets the caller's bytes untouched", async () => {
    const history = [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAABo-openai-own-state' },
      { role: 'assistant', content: [{ type: 'output_text', text: '185' }] },
    ];
    const request = turn('gpt-test', history);
    const res = await postJson(gw, '/v1/responses', request);
    assert.equal(res.status, 200, res.text);
    const raw = (await mock.stats()).last_request.body;
    assert.equal(raw, JSON.stringify({ ...request, model: 'mock-model' }));
  });
});
