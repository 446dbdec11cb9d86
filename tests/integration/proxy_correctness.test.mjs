// Regression tests for the data-plane defects a review of the proxy found: one tenant's answer
// delivered to another on a pooled connection, a generation silently paid twice, ambiguous
// request framing, early answers lost to a reset, a reload freeing what a request still uses,
// credentials forwarded where they do not belong, and headers and statuses the caller needs.
// Each test failed against the gateway before its fix.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  RawConnection,
  chatBody,
  gatewayConfig,
  makeTempDir,
  openaiError,
  postJson,
  rawRequest,
  readFixture,
  removeTempDir,
  runBinary,
  sluiceBin,
  splitSse,
  startMock,
  startSluice,
  startStack,
  toYaml,
  useStack,
  waitFor,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(undefined, (s) => ({ gw, mock } = s));

const content = (r) => r.json?.choices?.[0]?.message?.content;

describe('pooled upstream connections never carry one answer to another caller', () => {
  // workers: 1 (the harness default), so every request uses the same pool and connection.
  test('an interim 100 Continue from the upstream is skipped, not relayed as the answer', async () => {
    const first = await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: { 'x-mock-informational': '100', 'x-mock-events': '2' },
    });
    assert.equal(first.status, 200, first.text);
    assert.equal(content(first), 'Mock reply w1 w2');
    const second = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-events': '3' } });
    assert.equal(second.status, 200, second.text);
    assert.equal(content(second), 'Mock reply w1 w2 w3', 'the second caller got another answer');
  });

  test('interim 103 heads before a stream are skipped too', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ stream: true }), {
      headers: { 'x-mock-informational': '100,103', 'x-mock-events': '2' },
    });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^text\/event-stream/);
    assert.match(r.text, /data: \[DONE\]/);
  });

  test('bytes an upstream leaves after its response never reach the next caller', async () => {
    for (const stream of [false, true]) {
      const first = await postJson(gw, '/v1/chat/completions', chatBody({ stream }), {
        headers: { 'x-mock-trailing-response': '1', 'x-mock-events': '2' },
      });
      assert.equal(first.status, 200, first.text);
      assert.ok(!first.text.includes('SMUGGLED'), first.text);
      const second = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-events': '3' } });
      assert.equal(second.status, 200, second.text);
      assert.ok(!second.text.includes('SMUGGLED-RESPONSE'), `cross-talk: ${second.text}`);
      assert.equal(content(second), 'Mock reply w1 w2 w3');
    }
    const stats = await mock.stats();
    assert.equal(stats.trailing_responses_sent, 2, 'the mock did leave bytes behind');
  });
});

describe('a request written in full is never re-sent', () => {
  test('a reused connection closed after the request was written is an error, sent once', async () => {
    await postJson(gw, '/v1/chat/completions', chatBody()); // leaves a pooled connection
    const key = `once-${Date.now()}`;
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: { 'x-mock-disconnect-after': '0', 'x-mock-count-key': key },
    });
    assert.equal(r.status, 502, r.text);
    assert.equal(openaiError(r.json)?.code, 'upstream_reset_after_send', r.text);
    assert.equal(r.headers.get('x-sluice-attempts'), '1');
    const stats = await mock.stats();
    assert.equal(stats.requests_by_header[key], 1, 'the upstream received the request more than once');
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.upstream.length, 1);
    assert.equal(entry.upstream[0].error_code, 'upstream_reset_after_send');
  });
});

describe('ambiguous request framing is refused and the connection closed', () => {
  const cases = [
    ['a final coding other than chunked', { 'transfer-encoding': 'gzip' }, 'abc'],
    ['chunked followed by another coding', { 'transfer-encoding': 'chunked, gzip' }, '3\r\nabc\r\n0\r\n\r\n'],
    ['chunked twice', { 'transfer-encoding': 'chunked, chunked' }, '3\r\nabc\r\n0\r\n\r\n'],
    ['Transfer-Encoding and Content-Length together', { 'transfer-encoding': 'chunked', 'content-length': '8' }, '3\r\nabc\r\n0\r\n\r\n'],
    ['a Content-Length list', { 'content-length': '10, 10' }, '0123456789'],
  ];
  for (const [name, headers, body] of cases) {
    test(name, async (t) => {
      const c = await RawConnection.open(gw.port);
      t.after(() => c.destroy());
      const smuggled = rawRequest('GET', '/healthz');
      const head = rawRequest('POST', '/v1/chat/completions', {
        headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', ...headers },
      });
      await c.write(Buffer.concat([head, Buffer.from(body, 'latin1'), smuggled]));
      const r = await c.readResponse();
      assert.equal(r.status, 400, r.text);
      assert.equal(r.headers.connection, 'close');
      assert.equal(r.headers['x-should-retry'], 'false');
      assert.ok(await c.waitClosed(3000), 'connection left open');
      assert.equal(c.buf.length, 0, `bytes after the 400: ${c.buf.toString('latin1')}`);
    });
  }

  test('two Content-Length fields', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    await c.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${GATEWAY_KEY}\r\n` +
        'content-length: 2\r\ncontent-length: 2\r\n\r\n{}GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n',
    );
    const r = await c.readResponse();
    assert.equal(r.status, 400, r.text);
    assert.ok(await c.waitClosed(3000));
    assert.equal(c.buf.length, 0);
  });
});

describe('early answers reach a client that is still sending its body', () => {
  // The gateway answers before reading the body; closing with unread bytes would reset the
  // connection, and a client still writing then sees the reset instead of the answer.
  const big = Buffer.alloc(4 * 1024 * 1024, 'a');
  const cases = [
    ['401 for a bad key', '/v1/chat/completions', { authorization: 'Bearer sk-wrong-key-000000000000' }, 401],
    ['404 for an unknown path', '/v1/nope', { authorization: `Bearer ${GATEWAY_KEY}` }, 404],
  ];
  for (const [name, p, headers, status] of cases) {
    test(name, async () => {
      for (let i = 0; i < 3; ++i) {
        const res = await fetch(`${gw.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: big });
        assert.equal(res.status, status);
        assert.equal(res.headers.get('x-should-retry'), 'false');
        await res.text();
      }
    });
  }

  test('413 for a body over the limit', async (t) => {
    const g = await startSluice(gatewayConfig(mock.baseUrl, { server: { max_body_bytes: '1MiB' } }));
    t.after(() => g.stop());
    for (let i = 0; i < 3; ++i) {
      const res = await fetch(`${g.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
        body: big,
      });
      assert.equal(res.status, 413);
      assert.equal(res.headers.get('x-should-retry'), 'false');
      await res.text();
    }
  });
});

describe('a reload never changes what an in-flight request uses', () => {
  test('a request whose head straddles a SIGHUP is served by the config it started on', async (t) => {
    const cfg = gatewayConfig(mock.baseUrl);
    const g = await startSluice(cfg);
    t.after(() => g.stop());
    const c = await RawConnection.open(g.port);
    t.after(() => c.destroy());
    await c.write('GET /readyz HTTP/1.1\r\nhost: x\r\n'); // the head is not complete yet
    // One worker serves both connections in order: once it has answered a request written
    // after those bytes, it has read them, so the request has begun before the reload.
    assert.equal((await fetch(`${g.url}/healthz`)).status, 200);
    g.reload({ ...cfg, version: 2 });
    await waitFor(async () => (await (await fetch(`${g.url}/readyz`)).json()).config_version === 2, {
      timeoutMs: 5000,
      message: 'reload applied',
    });
    await c.write('x-after-reload: 1\r\n\r\n');
    const r = await c.readResponse();
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.config_version, 1, 'the request switched snapshots mid-read');
  });
});

describe('streams', () => {
  test('an upstream that goes silent mid-stream is cut by timeout.idle_ms, not total', async (t) => {
    const g = await startSluice(
      gatewayConfig(mock.baseUrl, { provider: { timeout: { idle_ms: 300, first_byte_ms: 5000, total_ms: 60000 } } }),
    );
    t.after(() => g.stop());
    const r = await postJson(g, '/v1/chat/completions', chatBody({ stream: true }), {
      headers: { 'x-mock-stall-after': '2' },
    });
    assert.equal(r.status, 200);
    const events = splitSse(r.text);
    const last = JSON.parse(events.at(-1).replace(/^data: /, ''));
    assert.equal(last.error?.code, 'upstream_idle_timeout', r.text);
    const entry = await g.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.outcome, 'midstream_error');
    await waitFor(async () => (await mock.stats()).streams_aborted >= 1, { message: 'upstream stream closed' });
  });

  test('a translated stream that ends without [DONE] after its finish chunk is complete', async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-mock-omit-done': '1' },
      body: JSON.stringify({ model: 'gpt-test', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.match(text, /event: message_stop/);
    assert.doesNotMatch(text, /event: error/);
    const entry = await gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));
    assert.equal(entry.outcome, 'complete');
  });
});

describe('usage that cannot be converted exactly is clamped, never a 502 for a paid answer', () => {
  // Cached tokens above prompt tokens: Anthropic's input_tokens (cache excluded) would go
  // negative. The caller gets its answer with input_tokens 0; the log keeps the upstream's
  // figures and counts the anomaly.
  const usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 9 } };
  const anthropicBody = (stream) => JSON.stringify({ model: 'gpt-test', max_tokens: 16, stream, messages: [{ role: 'user', content: 'hi' }] });

  test('non-stream', async () => {
    const upstream = JSON.stringify({
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 1,
      model: 'mock-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage,
    });
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-mock-raw-body': upstream },
      body: anthropicBody(false),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.content[0].text, 'ok');
    assert.equal(body.usage.input_tokens, 0);
    assert.equal(body.usage.cache_read_input_tokens, 9);
    const entry = await gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));
    assert.equal(entry.usage_clamped, 1);
    assert.equal(entry.usage.input_tokens, 5);
    assert.equal(entry.usage.cache_read_tokens, 9);
  });

  test('stream', async (t) => {
    const dir = makeTempDir('sluice-fixtures-');
    const chunk = (o) => `data: ${JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'm', ...o })}\n\n`;
    writeFileSync(
      path.join(dir, 'odd-usage.sse'),
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }) +
        chunk({ choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: null }] }) +
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
        chunk({ choices: [], usage }) +
        'data: [DONE]\n\n',
    );
    const s = await startStack({ mockOpts: { fixtures: dir } });
    t.after(async () => {
      await s.stop();
      removeTempDir(dir);
    });
    const res = await fetch(`${s.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-mock-fixture': 'odd-usage.sse' },
      body: anthropicBody(true),
    });
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.match(text, /event: message_stop/);
    assert.doesNotMatch(text, /event: error/);
    const entry = await s.gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));
    assert.equal(entry.outcome, 'complete');
    assert.ok(entry.usage_clamped >= 1, JSON.stringify(entry));
    assert.equal(entry.usage.cache_read_tokens, 9);
  });
});

describe('what the upstream says about rate limits and success reaches the caller', () => {
  const limits = {
    'x-mock-set-x-ratelimit-remaining-requests': '99',
    'x-mock-set-x-ratelimit-reset-tokens': '6ms',
    'x-mock-set-retry-after-ms': '1500',
  };
  test('x-ratelimit-* and retry-after-ms on answers, passthrough and translated', async () => {
    const a = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: limits });
    const b = await postJson(gw, '/v1/chat/completions', chatBody({ stream: true }), { headers: limits });
    const c = await postJson(gw, '/v1/messages', { model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }, { headers: limits });
    for (const r of [a, b, c]) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '99');
      assert.equal(r.headers.get('x-ratelimit-reset-tokens'), '6ms');
      assert.equal(r.headers.get('retry-after-ms'), '1500');
    }
  });

  test('x-ratelimit-* and retry-after on a 429', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: { ...limits, 'x-mock-status': '429', 'x-mock-retry-after': '3' },
    });
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '3');
    assert.equal(r.headers.get('retry-after-ms'), '1500');
    assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '99');
    assert.equal(r.headers.get('x-should-retry'), 'true');
  });

  test('the exact 2xx status of a passthrough answer is relayed', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-status': '203' } });
    assert.equal(r.status, 203, r.text);
    assert.equal(r.json.object, 'chat.completion');
  });
});

describe('x-should-retry on every error the gateway answers itself', () => {
  test('false for what the caller must fix', async () => {
    const cases = [
      [await postJson(gw, '/v1/chat/completions', chatBody(), { key: 'sk-wrong-key-000000000000' }), 401],
      [await postJson(gw, '/v1/chat/completions', chatBody({ model: 'nope' })), 404],
      [await postJson(gw, '/v1/chat/completions', { model: 'gpt-test', messages: [{ role: 'user', content: 5 }] }), 400],
      [await postJson(gw, '/v1/messages', { model: 'gpt-test', messages: [] }), 400],
      [await fetch(`${gw.url}/v1/models`, { method: 'DELETE', headers: { authorization: `Bearer ${GATEWAY_KEY}` } }), 405],
    ];
    for (const [r, status] of cases) {
      assert.equal(r.status, status);
      assert.equal(r.headers.get('x-should-retry'), 'false', `status ${status}`);
    }
  });

  test('true for load shedding and transient upstream failures, with Retry-After when shed', async (t) => {
    const g = await startSluice(
      gatewayConfig(mock.baseUrl, {
        provider: { pool: { max_connections: 1, acquire_timeout_ms: 50 }, timeout: { first_byte_ms: 300, total_ms: 5000 } },
      }),
    );
    t.after(() => g.stop());
    const slow = postJson(g, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-latency-ms': '1000' } });
    await waitFor(async () => (await mock.stats()).requests_total >= 1, { message: 'slow request at the mock' });
    const shed = await postJson(g, '/v1/chat/completions', chatBody());
    assert.equal(shed.status, 429, shed.text);
    assert.equal(shed.headers.get('x-should-retry'), 'true');
    assert.ok(Number(shed.headers.get('retry-after')) >= 1);
    const timedOut = await slow;
    assert.equal(timedOut.status, 504, timedOut.text);
    assert.equal(timedOut.headers.get('x-should-retry'), 'true');
  });
});

describe('the gateway key never reaches a provider', () => {
  for (const pattern of ['x-api-key', 'api-key', 'x-api-*', 'api-*', 'x-a*']) {
    test(`forward_headers [${pattern}] is a config error`, async (t) => {
      const dir = makeTempDir('sluice-cfg-');
      t.after(() => removeTempDir(dir));
      const file = path.join(dir, 'sluice.yaml');
      writeFileSync(file, toYaml(gatewayConfig('http://127.0.0.1:9/v1', { provider: { forward_headers: [pattern] } })));
      const r = await runBinary(sluiceBin, ['check-config', file]);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, /never forwarded/);
    });
  }

  test('x-api-key and api-key from the caller are not forwarded even under a matching prefix', async () => {
    for (const header of ['x-api-key', 'api-key']) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { [header]: GATEWAY_KEY, 'content-type': 'application/json', 'x-mock-events': '1' },
        body: JSON.stringify(chatBody()),
      });
      assert.equal(res.status, 200);
      const { last_request: lr } = await mock.stats();
      assert.ok(!JSON.stringify(lr).includes(GATEWAY_KEY), 'the gateway key reached the upstream');
    }
  });
});

describe('the pool limit is one limit for the whole instance', () => {
  // Opens keep-alive connections until each of the two workers holds `perWorker` of them (the
  // access log names the worker that served each probe), closing the extra ones.
  async function connectionsPerWorker(g, perWorker) {
    const byWorker = new Map([[0, []], [1, []]]);
    for (let i = 0; i < 200; ++i) {
      const c = await RawConnection.open(g.port);
      const id = `probe-${i}-${Date.now()}`;
      await c.write(rawRequest('GET', '/healthz', { headers: { 'x-request-id': id } }));
      await c.readResponse();
      const entry = await g.waitForLog((e) => e.request_id === id);
      const list = byWorker.get(entry.worker);
      if (list.length < perWorker) {
        list.push(c);
      } else {
        c.destroy();
      }
      if ([...byWorker.values()].every((l) => l.length === perWorker)) {
        return byWorker;
      }
    }
    throw new Error('the kernel never spread connections over both workers');
  }

  const slowChat = (key) =>
    rawRequest('POST', '/v1/chat/completions', {
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', 'x-mock-latency-ms': '800', 'x-mock-count-key': key },
      body: JSON.stringify(chatBody()),
    });

  test('one busy worker may use the connections the others leave free', async (t) => {
    const g = await startSluice(
      gatewayConfig(mock.baseUrl, { server: { workers: 2 }, provider: { pool: { max_connections: 2, acquire_timeout_ms: 200 } } }),
    );
    t.after(() => g.stop());
    const byWorker = await connectionsPerWorker(g, 2);
    t.after(() => [...byWorker.values()].flat().forEach((c) => c.destroy()));
    const [a, b] = byWorker.get(0);
    await Promise.all([a.write(slowChat('pool-a')), b.write(slowChat('pool-b'))]);
    const [ra, rb] = await Promise.all([a.readResponse(), b.readResponse()]);
    assert.equal(ra.status, 200, ra.text);
    assert.equal(rb.status, 200, `shed while the other worker had a free connection: ${rb.text}`);
  });

  test('and never more than max_connections are open across workers', async (t) => {
    const g = await startSluice(
      gatewayConfig(mock.baseUrl, { server: { workers: 2 }, provider: { pool: { max_connections: 1, acquire_timeout_ms: 200 } } }),
    );
    t.after(() => g.stop());
    const byWorker = await connectionsPerWorker(g, 2);
    const conns = [...byWorker.values()].flat();
    t.after(() => conns.forEach((c) => c.destroy()));
    await Promise.all(conns.map((c, i) => c.write(slowChat(`cap-${i}`))));
    const statuses = (await Promise.all(conns.map((c) => c.readResponse()))).map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 429, 429, 429]);
  });
});
