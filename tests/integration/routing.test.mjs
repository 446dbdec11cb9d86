// Routing and resilience against sluice-mock-upstream fault scripts: fallback on 5xx, 400 never
// retried or cascaded, retry budgets under a 429 storm, Retry-After honoured and capped, slow
// first bytes, the streaming commit point, circuit breakers, and a client leaving during a
// backoff. Each provider below is the same mock with different fault headers, and counts its
// requests under its own x-mock-count-key.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  chatBody,
  postJson,
  splitSse,
  startMock,
  startSluice,
  waitFor,
} from '../support/harness.mjs';

let mock;
let gw;

// A provider at the mock whose every request carries `headers` (and its count key).
const provider = (id, headers = {}, extra = {}) => ({
  id,
  adapter: 'openai',
  base_url: mock.baseUrl,
  api_key: PROVIDER_KEY,
  headers: { 'x-mock-count-key': id, ...headers },
  forward_headers: ['x-mock-*'],
  ...extra,
});

const target = (p, extra = {}) => ({ provider: p, model: 'mock-model', ...extra });

function config() {
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 1, drain_timeout_ms: 3000 },
    // A large instance-wide retry budget: the tests share one gateway and each spends retries;
    // the storm test checks a target's own budget.
    routing: { retry: { budget_burst: 1000 }, circuit_breaker: { min_requests: 4, error_rate: 0.5, open_ms: 60000 } },
    providers: [
      provider('good'),
      provider('good2'),
      provider('fail503', { 'x-mock-status': '503' }),
      provider('fail400', { 'x-mock-status': '400' }),
      provider('storm429', { 'x-mock-status': '429' }),
      provider('breaker503', { 'x-mock-status': '503' }),
      provider('slow', { 'x-mock-first-byte-ms': '5000' }, { timeout: { first_byte_ms: 300 } }),
      provider('cut', { 'x-mock-disconnect-after': '0' }),
      provider('asks_wait', { 'x-mock-status': '429', 'x-mock-retry-after': '30' }),
      provider('backoff503', { 'x-mock-status': '503' }),
      provider('resp1'),
      provider('resp2'),
      provider('resp3'),
    ],
    routes: [
      { alias: 'fallback-5xx', targets: [target('fail503'), target('good')] },
      { alias: 'fallback-400', targets: [target('fail400'), target('good')] },
      {
        alias: 'storm',
        provider: 'storm429',
        model: 'mock-model',
        retry: { per_target_attempts: 3, budget_ratio: 0.1, budget_burst: 2, backoff_base_ms: 1, backoff_max_ms: 2 },
      },
      {
        alias: 'once-429',
        provider: 'good',
        model: 'mock-model',
        retry: { per_target_attempts: 2, retry_after_max_ms: 5000 },
      },
      { alias: 'capped', targets: [target('asks_wait'), target('good2')], retry: { per_target_attempts: 2, retry_after_max_ms: 2000 } },
      { alias: 'slow-first-byte', targets: [target('slow'), target('good')] },
      { alias: 'cut-stream', targets: [target('cut'), target('good2')] },
      { alias: 'cut-after', targets: [target('good'), target('good2')] },
      { alias: 'breaker', targets: [target('breaker503'), target('good')] },
      {
        alias: 'backoff',
        provider: 'backoff503',
        model: 'mock-model',
        retry: { per_target_attempts: 3, backoff_base_ms: 5000, backoff_max_ms: 5000 },
      },
      {
        alias: 'resp-pool',
        policy: { loadbalance: { targets: [target('resp1'), target('resp2')] } },
      },
      { alias: 'resp-elsewhere', provider: 'resp3', model: 'mock-model' },
      {
        alias: 'by-rule',
        policy: {
          conditional: {
            rules: [
              { when: { headers: { 'x-sluice-tier': { in: ['gold', 'platinum'] } } }, then: target('resp1') },
              { when: { stream: true, max_tokens: { gt: 1000 } }, then: target('resp2') },
              { when: { key: 'other' }, then: target('resp3') },
            ],
            default: target('good2'),
          },
        },
      },
      {
        alias: 'pool',
        policy: {
          fallback: {
            targets: [
              { loadbalance: { strategy: 'ordered', targets: [target('fail503'), target('breaker503')] } },
              target('good2'),
            ],
          },
        },
      },
    ],
    keys: [
      { name: 'test', key: GATEWAY_KEY },
      { name: 'other', key: 'sk-sluice-other-key-000000000003' },
    ],
  };
}

const counts = async () => (await mock.stats()).requests_by_header;

before(async () => {
  mock = await startMock();
  gw = await startSluice(config());
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
});

describe('routing and resilience', () => {
  test('a 5xx from the primary falls back to the next target, invisibly', async () => {
    const before = await counts();
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'fallback-5xx' }));
    assert.equal(r.status, 200, r.text);
    assert.match(r.json.choices[0].message.content, /^Mock reply/);
    assert.equal(r.headers.get('x-sluice-attempts'), '2');
    assert.equal(r.headers.get('x-sluice-provider'), 'good');
    assert.equal(r.headers.get('x-sluice-target'), '1');
    const after = await counts();
    assert.equal((after.fail503 ?? 0) - (before.fail503 ?? 0), 1);
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.deepEqual(entry.upstream.map((a) => [a.provider, a.status, a.target]), [
      ['fail503', 503, '0'],
      ['good', 200, '1'],
    ]);
  });

  test('a 400 is never retried and never cascades to a fallback', async () => {
    const before = await counts();
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'fallback-400' }));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.headers.get('x-sluice-attempts'), '1');
    const after = await counts();
    assert.equal((after.fail400 ?? 0) - (before.fail400 ?? 0), 1);
    assert.equal(after.good ?? 0, before.good ?? 0, 'the fallback was not called');
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.retry_stop, 'not retryable');
  });

  test('Retry-After is honoured on the same target', async () => {
    const key = `once-429-${Date.now()}`;
    const started = performance.now();
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'once-429' }), {
      headers: { 'x-mock-status': '429,200', 'x-mock-sequence-key': key, 'x-mock-retry-after': '1' },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-sluice-attempts'), '2');
    assert.ok(performance.now() - started >= 900, 'the retry waited for the upstream\'s Retry-After');
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.upstream[1].backoff_ms, 1000);
  });

  test('a Retry-After above the cap moves to the next target at once', async () => {
    const started = performance.now();
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'capped' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-sluice-provider'), 'good2');
    assert.ok(performance.now() - started < 20000, 'did not wait the 30 s asked for');
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.upstream[1].backoff_ms ?? 0, 0);
  });

  test('a slow first byte fails over within first_byte_ms', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'slow-first-byte' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-sluice-provider'), 'good');
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.upstream[0].error, 'upstream_timeout');
  });

  test('a stream cut before its first content fails over: the caller sees one clean stream', async () => {
    const before = await counts();
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'cut-stream', stream: true }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-sluice-attempts'), '2');
    assert.equal(r.headers.get('x-sluice-provider'), 'good2');
    const events = splitSse(r.text);
    assert.equal(events.filter((e) => e.includes('"role":"assistant"')).length, 1, 'one role prelude');
    assert.ok(events.at(-1).includes('[DONE]'), r.text);
    assert.ok(!r.text.includes('"error"'), r.text);
    const after = await counts();
    assert.equal((after.cut ?? 0) - (before.cut ?? 0), 1);
  });

  test('a stream cut after its first content ends with an error event, no failover', async () => {
    const before = await counts();
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'cut-after', stream: true }), {
      headers: { 'x-mock-disconnect-after': '2' },
    });
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /Mock reply/);
    assert.ok(!r.text.includes('data: [DONE]'), r.text);
    assert.match(r.text, /"error"/);
    const after = await counts();
    assert.equal((after.good ?? 0) - (before.good ?? 0), 1);
    assert.equal((after.good2 ?? 0) - (before.good2 ?? 0), 0, 'committed: never re-sent elsewhere');
  });

  test('the breaker opens after min_requests failures: the target goes last, and /readyz shows it', async () => {
    for (let i = 0; i < 4; i++) {
      const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'breaker' }));
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('x-sluice-attempts'), '2');
    }
    const ready = await (await fetch(`${gw.url}/readyz`)).json();
    const state = ready.targets.find((t) => t.provider === 'breaker503');
    assert.equal(state.breaker, 'open', JSON.stringify(ready));
    const before = await counts();
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'breaker' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-sluice-attempts'), '1', 'the open target is no longer tried first');
    assert.equal(r.headers.get('x-sluice-provider'), 'good');
    const after = await counts();
    assert.equal(after.breaker503, before.breaker503);
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.upstream.length, 1);
  });

  test('every target of a nested tree in its order; the answering path in x-sluice-target', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'pool' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-sluice-provider'), 'good2');
    assert.equal(r.headers.get('x-sluice-target'), '1');
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    // breaker503 is open (previous test): after fail503 in the pool, then the fallback.
    assert.deepEqual(entry.upstream.map((a) => a.target), ['0.0', '0.1', '1']);
    assert.equal(entry.upstream[1].breaker, 'open');
  });

  test('a client that leaves during a backoff cancels the remaining attempts', async () => {
    const before = await counts();
    const controller = new AbortController();
    const pending = postJson(gw, '/v1/chat/completions', chatBody({ model: 'backoff' }), {
      signal: controller.signal,
    }).catch((e) => e);
    await waitFor(async () => ((await counts()).backoff503 ?? 0) > (before.backoff503 ?? 0), {
      message: 'first attempt',
    });
    controller.abort();
    await pending;
    const entry = await gw.waitForLog((e) => e.alias === 'backoff' && e.outcome === 'client_gone', {
      timeoutMs: 3000,
    });
    assert.equal(entry.upstream.length, 1);
    const after = await counts();
    assert.equal(after.backoff503 - (before.backoff503 ?? 0), 1, 'no attempt after the caller left');
  });

  test('a Responses continuation goes to the provider that stored what it continues, only there', async () => {
    const first = await postJson(gw, '/v1/responses', { model: 'resp-pool', input: 'Say hello' });
    assert.equal(first.status, 200, first.text);
    const creator = first.headers.get('x-sluice-provider');
    const other = creator === 'resp1' ? 'resp2' : 'resp1';
    const before = await counts();
    for (let i = 0; i < 12; i++) {
      const r = await postJson(gw, '/v1/responses', {
        model: 'resp-pool',
        input: 'And again',
        previous_response_id: first.json.id,
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('x-sluice-provider'), creator);
    }
    const after = await counts();
    assert.equal((after[creator] ?? 0) - (before[creator] ?? 0), 12);
    assert.equal(after[other] ?? 0, before[other] ?? 0, 'never balanced away from the state');
    // A model whose route has no target at the creator: a clear 400, nothing sent upstream.
    const elsewhere = await postJson(gw, '/v1/responses', {
      model: 'resp-elsewhere',
      input: 'x',
      previous_response_id: first.json.id,
    });
    assert.equal(elsewhere.status, 400, elsewhere.text);
    assert.equal(elsewhere.json.error.param, 'previous_response_id');
    assert.equal((await counts()).resp3 ?? 0, 0);
  });

  test('a conditional node routes on a header, on stream and max_tokens, and on the key', async () => {
    const via = async (body, opts = {}) => {
      const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'by-rule', ...body }), opts);
      assert.equal(r.status, 200, r.text);
      return [r.headers.get('x-sluice-provider'), r.headers.get('x-sluice-target')];
    };
    assert.deepEqual(await via({}), ['good2', '3']);
    assert.deepEqual(await via({}, { headers: { 'x-sluice-tier': 'gold' } }), ['resp1', '0']);
    assert.deepEqual(await via({}, { headers: { 'x-sluice-tier': 'bronze' } }), ['good2', '3']);
    assert.deepEqual(await via({ stream: true, max_tokens: 2000 }), ['resp2', '1']);
    assert.deepEqual(await via({ stream: true, max_tokens: 500 }), ['good2', '3']);
    assert.deepEqual(await via({ max_tokens: 2000 }), ['good2', '3'], 'both tests of a rule must pass');
    assert.deepEqual(await via({}, { key: 'sk-sluice-other-key-000000000003' }), ['resp3', '2']);
  });

  // Last: the storm spends the instance-wide retry budget the other tests need.
  test('a 429 storm: upstream attempts per request stay within 1 + budget_ratio (plus the burst)', async () => {
    const requests = 60;
    for (let i = 0; i < requests; i++) {
      const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'storm' }));
      assert.equal(r.status, 429, r.text);
    }
    const upstream = (await counts()).storm429;
    // Within the budget window (10 s) the target allows 0.1 retries per request plus a burst of
    // 2: at most 60 + 6 + 2 attempts, where unbounded retries (3 per request) would make 180.
    assert.ok(upstream >= requests + requests * 0.1 - 1, `${upstream} upstream attempts`);
    assert.ok(upstream <= requests + requests * 0.1 + 2, `${upstream} upstream attempts for ${requests} requests`);
  });
});
