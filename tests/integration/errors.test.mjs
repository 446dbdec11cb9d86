// Error mapping: request validation, routing and key errors, upstream statuses relayed in
// OpenAI shape, unreachable / slow / saturated upstreams.

import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  LIMITED_KEY,
  PROVIDER_KEY,
  REQUEST_ID_RE,
  chatBody,
  closedPort,
  gatewayConfig,
  openaiError,
  postJson,
  startMock,
  startSluice,
  useStack,
  waitFor,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(undefined, (s) => ({ gw, mock } = s));

function assertError(r, status, { code, param, type } = {}) {
  assert.equal(r.status, status, r.text);
  const e = openaiError(r.json);
  assert.ok(e, `not an OpenAI error object: ${r.text}`);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(r.headers.get('x-request-id'), 'x-request-id missing on an error');
  if (code !== undefined) {
    assert.equal(e.code, code, r.text);
  }
  if (param !== undefined) {
    assert.equal(e.param, param, r.text);
  }
  if (type !== undefined) {
    assert.equal(e.type, type, r.text);
  }
  return e;
}

describe('request validation (400)', () => {
  test('malformed JSON', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', '{"model": "gpt-test",'), 400, {
      type: 'invalid_request_error',
    });
  });

  test('body that is JSON but not an object', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', '[1,2]'), 400);
  });

  test('empty body', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', ''), 400);
  });

  test('missing model names param "model"', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] }), 400, {
      param: 'model',
    });
  });

  test('missing messages names param "messages"', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', { model: 'gpt-test' }), 400, { param: 'messages' });
  });

  test('empty messages names param "messages"', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', { model: 'gpt-test', messages: [] }), 400, {
      param: 'messages',
    });
  });

  test('non-boolean stream names param "stream"', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', chatBody({ stream: 'yes' })), 400, { param: 'stream' });
  });

  test('embeddings without input names param "input"', async () => {
    assertError(await postJson(gw, '/v1/embeddings', { model: 'embed-test' }), 400, { param: 'input' });
  });

  test('validation errors never reach the upstream', async () => {
    await postJson(gw, '/v1/chat/completions', { model: 'gpt-test' });
    assert.equal((await mock.stats()).requests_total, 0);
  });
});

describe('model routing errors', () => {
  test('unknown alias is 404 model_not_found', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', chatBody({ model: 'no-such-model' })), 404, {
      code: 'model_not_found',
      param: 'model',
    });
  });

  test('a key not allowed for the alias is 403 model_not_allowed', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'gpt-test' }), { key: LIMITED_KEY });
    assertError(r, 403, { code: 'model_not_allowed', type: 'permission_error' });
    assert.equal((await mock.stats()).requests_total, 0);
    const ok = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'mock-chat' }), { key: LIMITED_KEY });
    assert.equal(ok.status, 200, ok.text);
  });

  test('a chat alias on /v1/embeddings is 404', async () => {
    assertError(await postJson(gw, '/v1/embeddings', { model: 'gpt-test', input: 'x' }), 404, {
      code: 'model_not_found',
    });
  });

  test('an embeddings alias on /v1/chat/completions is 404', async () => {
    assertError(await postJson(gw, '/v1/chat/completions', chatBody({ model: 'embed-test' })), 404, {
      code: 'model_not_found',
    });
  });
});

describe('upstream statuses are relayed in OpenAI shape', () => {
  for (const status of [400, 404, 422, 500, 502, 503]) {
    test(`upstream ${status}`, async () => {
      const r = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-status': String(status) } });
      const e = assertError(r, status);
      assert.equal(e.message, `mock injected status ${status}`, 'the upstream OpenAI body must pass through');
      assert.equal(r.headers.get('x-sluice-provider'), 'up');
      const entry = await gw.waitForLog((l) => l.request_id === r.headers.get('x-request-id'));
      assert.equal(entry.status, status);
      assert.equal(entry.outcome, 'upstream_error');
    });
  }

  // The provider refused the gateway's own credentials: relaying its 401/403 would tell the
  // caller to fix a key it does not hold (and SDKs give up on 401 without saying why).
  for (const status of [401, 403]) {
    test(`upstream ${status} (the provider refused the gateway's key) is a 502 for the caller`, async () => {
      const r = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-status': String(status) } });
      const e = assertError(r, 502, { code: 'upstream_auth_failed' });
      assert.match(e.message, /'up'/);
      assert.match(e.message, /credentials/);
      assert.equal(r.headers.get('x-should-retry'), 'false');
      const entry = await gw.waitForLog((l) => l.request_id === r.headers.get('x-request-id'));
      assert.equal(entry.status, 502);
      assert.equal(entry.upstream.at(-1).status, status, 'the log keeps the provider status');
      assert.equal(entry.error_code, 'upstream_auth_failed');
    });
  }

  test('a provider error body that echoes the provider key is relayed scrubbed', async () => {
    const echoed = JSON.stringify({
      error: { message: `Incorrect API key provided: ${PROVIDER_KEY}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
    for (const status of ['400', '401']) {
      const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
        headers: { 'x-mock-status': status, 'x-mock-raw-body': echoed },
      });
      assert.equal(r.status, status === '401' ? 502 : 400, r.text);
      assert.ok(!r.text.includes(PROVIDER_KEY), r.text);
      assert.match(r.text, /\[redacted\]/);
    }
  });

  test('upstream 429 relays Retry-After', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: { 'x-mock-status': '429', 'x-mock-retry-after': '7' },
    });
    assertError(r, 429, { code: 'rate_limit_exceeded' });
    assert.equal(r.headers.get('retry-after'), '7');
  });

  test('upstream error on a stream request is a JSON error, not an SSE stream', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ stream: true }), {
      headers: { 'x-mock-status': '503' },
    });
    assertError(r, 503);
  });

  test('upstream error on embeddings', async () => {
    const r = await postJson(gw, '/v1/embeddings', { model: 'embed-test', input: 'x' }, {
      headers: { 'x-mock-status': '500' },
    });
    assertError(r, 500);
  });

  test('a non-OpenAI error body is wrapped with a message naming the provider', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: {
        'x-mock-status': '502',
        'x-mock-raw-body': '<html><body>Bad Gateway from nginx</body></html>',
        'x-mock-content-type': 'text/html',
      },
    });
    const e = assertError(r, 502);
    assert.match(e.message, /'up'/);
    assert.ok(!r.text.includes('<html>'), 'non-JSON body passed through');
  });

  test('a {"detail": ...} error body is wrapped and keeps the detail', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: { 'x-mock-status': '422', 'x-mock-raw-body': '{"detail":"field required: messages"}' },
    });
    const e = assertError(r, 422);
    assert.match(e.message, /'up'/);
    assert.match(e.message, /field required: messages/);
  });

  test('a recorded OpenAI 404 error fixture passes through unchanged', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: { 'x-mock-fixture': 'error-404-model-not-found.json', 'x-mock-status': '404' },
    });
    const e = assertError(r, 404, { code: 'model_not_found' });
    assert.match(e.message, /does not exist/);
  });
});

describe('upstream unreachable, slow or saturated', () => {
  test('nothing listening at base_url is 502', async (t) => {
    const port = await closedPort();
    const g = await startSluice(gatewayConfig(`http://127.0.0.1:${port}/v1`));
    t.after(() => g.stop());
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assertError(r, 502);
    assert.ok(!r.text.includes(PROVIDER_KEY));
    const entry = await g.waitForLog((l) => l.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.outcome, 'upstream_error');
  });

  test('no response head within timeout.first_byte_ms is 504 upstream_first_byte_timeout', async (t) => {
    const g = await startSluice(
      gatewayConfig(mock.baseUrl, { provider: { timeout: { first_byte_ms: 300, total_ms: 5000 } } }),
    );
    t.after(() => g.stop());
    const started = performance.now();
    const r = await postJson(g, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-latency-ms': '3000' } });
    const elapsed = performance.now() - started;
    assertError(r, 504, { code: 'upstream_first_byte_timeout' });
    assert.ok(elapsed < 2500, `504 took ${elapsed} ms; the first-byte deadline is 300 ms`);
  });

  test('a route timeout overrides the provider first_byte_ms', async (t) => {
    const cfg = gatewayConfig(mock.baseUrl);
    cfg.routes[0].timeout = { first_byte_ms: 200 };
    const g = await startSluice(cfg);
    t.after(() => g.stop());
    const r = await postJson(g, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-latency-ms': '3000' } });
    assertError(r, 504, { code: 'upstream_first_byte_timeout' });
  });

  test('pool exhausted is 429 upstream_pool_exhausted with Retry-After', async (t) => {
    const g = await startSluice(
      gatewayConfig(mock.baseUrl, { provider: { pool: { max_connections: 1, acquire_timeout_ms: 50 } } }),
    );
    t.after(() => g.stop());
    const slow = postJson(g, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-latency-ms': '1500' } });
    // The slow request holds the only connection once the mock has seen it.
    await waitFor(async () => (await mock.stats()).requests_total >= 1, { timeoutMs: 2000 });
    const shed = await postJson(g, '/v1/chat/completions', chatBody());
    assertError(shed, 429, { code: 'upstream_pool_exhausted' });
    assert.match(shed.headers.get('retry-after') ?? '', /^\d+$/);
    const first = await slow;
    assert.equal(first.status, 200, first.text);
    assert.equal((await mock.stats()).requests_total, 1, 'the shed request must not reach the upstream');
  });

  test('pool max_connections is for the whole instance with workers: 0 (one per core)', { skip: os.availableParallelism() < 2 && 'needs >= 2 CPUs' }, async (t) => {
    // docs/config.md: "Open connections to this provider for the whole instance; each worker
    // gets an equal share (at least 1)". With 2+ workers and max_connections 2, at most 2
    // upstream requests may be in flight at once, whichever workers take the connections.
    const m = await startMock();
    t.after(() => m.stop());
    const g = await startSluice(
      gatewayConfig(m.baseUrl, {
        server: { workers: 0 },
        provider: { pool: { max_connections: 2, acquire_timeout_ms: 50 } },
      }),
    );
    t.after(() => g.stop());
    assert.ok(g.listening.workers >= 2, `workers ${g.listening.workers}`);
    const n = 10;
    const results = await Promise.all(
      Array.from({ length: n }, () =>
        // A fresh connection per request, so SO_REUSEPORT spreads them over the workers.
        fetch(`${g.url}/v1/chat/completions`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${GATEWAY_KEY}`,
            'content-type': 'application/json',
            connection: 'close',
            'x-mock-latency-ms': '800',
          },
          body: JSON.stringify(chatBody()),
        }).then(async (res) => ({ status: res.status, text: await res.text() })),
      ),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const shed = results.filter((r) => r.status === 429).length;
    assert.equal(ok + shed, n, JSON.stringify(results.map((r) => r.status)));
    const stats = await m.stats();
    assert.ok(
      ok <= 2,
      `${ok} of ${n} slow requests were served concurrently (mock saw ${stats.requests_total} requests); ` +
        'pool max_connections is 2 for the whole instance',
    );
  });
});

describe('upstream responses the gateway must refuse', () => {
  test('a non-stream response over server.max_upstream_response_bytes is 502', async (t) => {
    const g = await startSluice(gatewayConfig(mock.baseUrl, { server: { max_upstream_response_bytes: 1024 } }));
    t.after(() => g.stop());
    const small = await postJson(g, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-events': '2' } });
    assert.equal(small.status, 200, small.text);
    const big = await postJson(g, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-events': '400' } });
    assertError(big, 502, { code: 'upstream_response_too_large' });
  });

  test('an upstream that closes without answering is 502', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-disconnect-after': '0' } });
    assertError(r, 502);
    const entry = await gw.waitForLog((l) => l.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.outcome, 'upstream_error');
  });
});

describe('error objects', () => {
  test('every gateway error has message, type, param and code and a request id', async () => {
    const cases = [
      await postJson(gw, '/v1/chat/completions', '{', {}),
      await postJson(gw, '/v1/chat/completions', chatBody(), { key: null }),
      await postJson(gw, '/v1/chat/completions', chatBody({ model: 'zzz' })),
    ];
    for (const r of cases) {
      assert.ok(openaiError(r.json), r.text);
      assert.deepEqual(Object.keys(r.json.error).sort(), ['code', 'message', 'param', 'type']);
      const id = r.headers.get('x-request-id');
      assert.ok(REQUEST_ID_RE.test(id), id);
    }
  });
});
