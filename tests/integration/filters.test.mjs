// Features that live in the request filter chain, through the real binary against
// sluice-mock-upstream: SSE keep-alives while a model thinks (before and after the response
// head, across a failover), a route's max_output_tokens cap as the upstream receives it and as
// admission reserves it, and provider capacity charged to the provider each attempt goes to.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  chatBody,
  postJson,
  startMock,
  startSluice,
} from '../support/harness.mjs';

let mock;
let gw;

const provider = (id, headers = {}, extra = {}) => ({
  id,
  adapter: 'openai',
  base_url: mock.baseUrl,
  api_key: PROVIDER_KEY,
  headers: { 'x-mock-count-key': id, ...headers },
  forward_headers: ['x-mock-*'],
  ...extra,
});

function config() {
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 1, drain_timeout_ms: 3000, heartbeat_ms: 150 },
    routing: { retry: { budget_burst: 1000 } },
    providers: [
      provider('good'),
      provider('thinking', { 'x-mock-first-byte-ms': '700' }),
      provider('slow_head', { 'x-mock-latency-ms': '700' }),
      provider('slow_fail', { 'x-mock-latency-ms': '600', 'x-mock-status': '503' }),
      provider('fail503', { 'x-mock-status': '503' }),
      provider('full'),
      provider('roomy'),
      { id: 'claude', adapter: 'anthropic', base_url: mock.url, api_key: PROVIDER_KEY },
    ],
    routes: [
      { alias: 'plain', provider: 'good', model: 'mock-model' },
      { alias: 'quiet', provider: 'good', model: 'mock-model', heartbeat_ms: 0 },
      { alias: 'thinker', provider: 'thinking', model: 'mock-model' },
      { alias: 'slow-head', provider: 'slow_head', model: 'mock-model' },
      {
        alias: 'early-then-failover',
        targets: [
          { provider: 'slow_fail', model: 'mock-model' },
          { provider: 'good', model: 'mock-model' },
        ],
      },
      { alias: 'capped', provider: 'good', model: 'mock-model', max_output_tokens: 100 },
      { alias: 'capped-claude', provider: 'claude', model: 'claude-x', max_output_tokens: 100 },
      {
        alias: 'strict',
        provider: 'good',
        model: 'mock-model',
        max_output_tokens: { limit: 64, action: 'refuse' },
      },
      {
        alias: 'full-failover',
        targets: [
          { provider: 'fail503', model: 'mock-model' },
          { provider: 'full', model: 'mock-model' },
        ],
      },
      {
        alias: 'roomy-failover',
        targets: [
          { provider: 'fail503', model: 'mock-model' },
          { provider: 'roomy', model: 'mock-model' },
        ],
      },
    ],
    keys: [
      { name: 'test', key: GATEWAY_KEY },
      { name: 'twice', key: 'sk-sluice-twice-key-000000000003' },
    ],
    limits: {
      keys: { twice: { rpm: 2 } },
      models: { capped: { tpm: 1000000 } },
      providers: { full: { rpm: 1 }, roomy: { rpm: 100 } },
    },
  };
}

before(async () => {
  mock = await startMock();
  gw = await startSluice(config());
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
});

async function stream(model, extra = {}) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(chatBody({ model, stream: true, ...extra })),
  });
  return { res, text: await res.text() };
}

const lastBody = async () => JSON.parse((await mock.stats()).last_request.body);

describe('SSE keep-alive', () => {
  test('a model thinking before its first event gets comments, then its whole answer', async () => {
    const { res, text } = await stream('thinker');
    assert.equal(res.status, 200);
    assert.match(text, /^: keep-alive\n\n/, 'the comment comes before any event');
    assert.ok(text.split(': keep-alive\n\n').length - 1 >= 2, text);
    assert.match(text, /Mock reply/);
    assert.match(text, /data: \[DONE\]\n\n$/);
    const entry = await gw.waitForLog((e) => e.alias === 'thinker');
    assert.equal(entry.outcome, 'complete');
  });

  test('a slow response head is covered too: the 200 head goes out early', async () => {
    const { res, text } = await stream('slow-head');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    assert.match(text, /^: keep-alive\n\n/);
    assert.match(text, /data: \[DONE\]\n\n$/);
  });

  test('after an early head the call still fails over while nothing but comments went out', async () => {
    const { res, text } = await stream('early-then-failover');
    assert.equal(res.status, 200);
    assert.match(text, /^: keep-alive\n\n/);
    assert.doesNotMatch(text, /mock injected status/, 'the failed attempt is not seen');
    assert.match(text, /Mock reply/);
    assert.match(text, /data: \[DONE\]\n\n$/);
    const entry = await gw.waitForLog((e) => e.alias === 'early-then-failover');
    assert.equal(entry.attempts, 2);
    assert.equal(entry.outcome, 'complete');
  });

  test('a stream that keeps talking gets no comments, and heartbeat_ms 0 turns them off', async () => {
    for (const model of ['plain', 'quiet']) {
      const { res, text } = await stream(model);
      assert.equal(res.status, 200);
      assert.doesNotMatch(text, /keep-alive/);
    }
  });

  test('a one-piece answer to a stream is relayed as it is, unless the head went out early', async () => {
    const ask = (latency) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${GATEWAY_KEY}`,
          'content-type': 'application/json',
          'x-mock-latency-ms': String(latency),
          'x-mock-raw-body': JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            created: 1,
            model: 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        },
        body: JSON.stringify(chatBody({ model: 'plain', stream: true })),
      });
    const quick = await ask(0);
    assert.equal(quick.headers.get('content-type'), 'application/json');
    assert.equal((await quick.json()).choices[0].message.content, 'whole');
    const late = await ask(600);
    const text = await late.text();
    assert.equal(late.status, 200);
    assert.equal(late.headers.get('content-type'), 'text/event-stream');
    assert.match(text, /^: keep-alive\n\n/);
    assert.match(text, /upstream_not_streaming|without a stream/);
    assert.doesNotMatch(text, /"whole"/, 'no JSON body after the SSE head');
  });

  test('a final failure after an early head is the protocol error event, not a status', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${GATEWAY_KEY}`,
        'content-type': 'application/json',
        'x-mock-latency-ms': '600',
        'x-mock-status': '500',
      },
      body: JSON.stringify(chatBody({ model: 'plain', stream: true })),
    });
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.match(text, /^: keep-alive\n\n/);
    assert.match(text, /data: \{"error":/);
    const entry = await gw.waitForLog((e) => e.alias === 'plain' && e.status === 200 && e.error);
    assert.equal(entry.outcome, 'upstream_error');
  });
});

describe('max_output_tokens', () => {
  test('a larger ask reaches the upstream capped, a missing one is added', async () => {
    let r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'capped', max_tokens: 5000 }));
    assert.equal(r.status, 200);
    assert.equal((await lastBody()).max_tokens, 100);
    r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'capped' }));
    assert.equal(r.status, 200);
    assert.equal((await lastBody()).max_tokens, 100);
    r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'capped', max_tokens: 7 }));
    assert.equal((await lastBody()).max_tokens, 7);
  });

  test('tokens per minute are reserved for the capped output, not the ask', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'capped', max_tokens: 900000 }));
    assert.equal(r.status, 200);
    const remaining = Number(r.headers.get('x-ratelimit-remaining-tokens'));
    assert.ok(remaining > 1000000 - 1000, `reserved ${1000000 - remaining} tokens`);
  });

  test('an Anthropic caller in passthrough is capped in its own field', async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'capped-claude', max_tokens: 64000, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200, await res.text());
    assert.equal((await lastBody()).max_tokens, 100);
  });

  test('refuse mode answers 400 naming the field and the limit', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'strict', max_tokens: 65 }));
    assert.equal(r.status, 400);
    assert.equal(r.json.error.param, 'max_tokens');
    assert.match(r.json.error.message, /at most 64/);
  });
});

describe('provider capacity per attempt', () => {
  test("a failover target's capacity is checked, and the caller gets the 429 when it is full", async () => {
    const first = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'full-failover' }));
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('x-sluice-provider'), 'full');
    const second = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'full-failover' }));
    assert.equal(second.status, 429, second.text);
    assert.match(second.json.error.message, /provider full: requests per minute \(limit 1\)/);
    assert.ok(Number(second.headers.get('retry-after')) >= 1);
    const stats = await mock.stats();
    assert.equal(stats.requests_by_header.full, 1, 'the full provider got no second request');
  });

  test('the caller is charged once per request, however many attempts it takes', async () => {
    const key = 'sk-sluice-twice-key-000000000003';
    for (let i = 0; i < 2; i += 1) {
      const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'roomy-failover' }), { key });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('x-sluice-attempts'), '2');
    }
    const third = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'roomy-failover' }), { key });
    assert.equal(third.status, 429);
    assert.match(third.json.error.message, /key twice: requests per minute/);
  });
});
