// Proxying basics: health endpoints, models, auth, header handling, chat and embeddings through
// the openai adapter (mock upstream) and the built-in mock provider, keep-alive, pipelining,
// 100-continue. One gateway + mock for the whole file.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  LIMITED_KEY,
  PROVIDER_KEY,
  REQUEST_ID_RE,
  RawConnection,
  chatBody,
  collectSse,
  getJson,
  jsonEvents,
  openaiError,
  postJson,
  rawRequest,
  startSluice,
  useStack,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(undefined, (s) => ({ gw, mock } = s));

describe('health and readiness', () => {
  test('GET /healthz is 200 {"status":"ok"} with a generated 32-hex x-request-id', async () => {
    const r = await getJson(gw, '/healthz', { key: null });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { status: 'ok' });
    assert.match(r.headers.get('x-request-id'), REQUEST_ID_RE);
  });

  test('GET /readyz is 200 with the running config version and every target\'s health', async () => {
    const r = await getJson(gw, '/readyz', { key: null });
    assert.equal(r.status, 200);
    assert.equal(r.json.status, 'ready');
    assert.equal(r.json.config_version, 1);
    const up = r.json.targets.find((t) => t.provider === 'up' && t.model === 'mock-model');
    assert.ok(up, JSON.stringify(r.json));
    assert.equal(up.breaker, 'closed');
    assert.equal(up.in_flight, 0);
  });

  test('two requests get two different generated request ids', async () => {
    const a = await getJson(gw, '/healthz', { key: null });
    const b = await getJson(gw, '/healthz', { key: null });
    assert.notEqual(a.headers.get('x-request-id'), b.headers.get('x-request-id'));
  });

  test('the listening line names address, port, workers and config_version', () => {
    assert.equal(gw.listening.address, '127.0.0.1');
    assert.ok(Number.isInteger(gw.listening.port) && gw.listening.port > 0);
    assert.equal(gw.listening.workers, 1);
    assert.equal(gw.listening.config_version, 1);
  });
});

describe('routing of paths and methods', () => {
  test('unknown path is 404 with an OpenAI error object', async () => {
    const r = await getJson(gw, '/v1/nope');
    assert.equal(r.status, 404);
    assert.ok(openaiError(r.json), r.text);
    assert.match(r.headers.get('x-request-id'), REQUEST_ID_RE);
  });

  test('wrong method is 405 with an OpenAI error object', async () => {
    const r = await getJson(gw, '/v1/chat/completions');
    assert.equal(r.status, 405);
    assert.ok(openaiError(r.json), r.text);
    const r2 = await postJson(gw, '/healthz', {});
    assert.equal(r2.status, 405);
    assert.ok(openaiError(r2.json), r2.text);
  });

  test('a query string does not change the route', async () => {
    const r = await getJson(gw, '/healthz?probe=1', { key: null });
    assert.equal(r.status, 200);
  });
});

describe('models', () => {
  test('GET /v1/models lists every alias for an unrestricted key', async () => {
    const r = await getJson(gw, '/v1/models');
    assert.equal(r.status, 200);
    assert.equal(r.json.object, 'list');
    const ids = r.json.data.map((m) => m.id).sort();
    assert.deepEqual(ids, ['embed-test', 'gpt-test', 'mock-chat', 'mock-embed']);
    for (const m of r.json.data) {
      assert.equal(m.object, 'model');
    }
  });

  test('a key with models: [mock-chat] sees only mock-chat', async () => {
    const r = await getJson(gw, '/v1/models', { key: LIMITED_KEY });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.json.data.map((m) => m.id),
      ['mock-chat'],
    );
  });
});

describe('authentication', () => {
  test('missing key is 401 missing_api_key', async () => {
    const r = await getJson(gw, '/v1/models', { key: null });
    assert.equal(r.status, 401);
    assert.equal(openaiError(r.json)?.code, 'missing_api_key', r.text);
  });

  test('wrong key is 401 invalid_api_key', async () => {
    const r = await getJson(gw, '/v1/models', { key: 'sk-wrong-key-000000000000' });
    assert.equal(r.status, 401);
    assert.equal(openaiError(r.json)?.code, 'invalid_api_key', r.text);
  });

  test('a non-Bearer Authorization scheme is not accepted as a key', async () => {
    const r = await getJson(gw, '/v1/models', { key: null, headers: { authorization: `Basic ${GATEWAY_KEY}` } });
    assert.equal(r.status, 401);
  });

  test('x-api-key and api-key headers are accepted', async () => {
    for (const name of ['x-api-key', 'api-key']) {
      const r = await getJson(gw, '/v1/models', { key: null, headers: { [name]: GATEWAY_KEY } });
      assert.equal(r.status, 200, `${name}: ${r.text}`);
    }
  });

  test('auth: none accepts requests without a key', async (t) => {
    const none = await startSluice({
      version: 1,
      listen: '127.0.0.1:0',
      server: { workers: 1 },
      auth: 'none',
      providers: [{ id: 'mock', adapter: 'mock' }],
      routes: [{ alias: 'mock-chat', provider: 'mock', model: 'mock-1' }],
    });
    t.after(() => none.stop({ timeoutMs: 2000 }));
    const models = await getJson(none, '/v1/models', { key: null });
    assert.equal(models.status, 200);
    assert.deepEqual(
      models.json.data.map((m) => m.id),
      ['mock-chat'],
    );
    const chat = await postJson(none, '/v1/chat/completions', chatBody({ model: 'mock-chat' }), { key: null });
    assert.equal(chat.status, 200, chat.text);
    assert.equal(chat.json.object, 'chat.completion');
  });
});

describe('chat through the openai adapter', () => {
  test('non-stream chat returns the upstream completion and the x-sluice-* headers', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.object, 'chat.completion');
    assert.equal(r.json.model, 'mock-model');
    assert.equal(r.json.choices[0].message.content, 'Mock reply w1 w2 w3 w4 w5 w6 w7 w8');
    assert.match(r.headers.get('content-type'), /^application\/json/);
    assert.equal(r.headers.get('x-sluice-provider'), 'up');
    assert.equal(r.headers.get('x-sluice-model'), 'mock-model');
    assert.equal(r.headers.get('x-sluice-attempts'), '1');
    assert.match(r.headers.get('x-request-id'), REQUEST_ID_RE);
  });

  test('the upstream gets the provider key, never the client key, and the upstream model name', async () => {
    await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-events': '2' } });
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/v1/chat/completions');
    assert.equal(lr.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    assert.ok(!JSON.stringify(lr).includes(GATEWAY_KEY), 'client key reached the upstream');
    const body = JSON.parse(lr.body);
    assert.equal(body.model, 'mock-model');
    assert.deepEqual(body.messages, [{ role: 'user', content: 'Say hello' }]);
  });

  test('x-api-key / api-key from the client are not forwarded upstream', async () => {
    const r = await getJson(gw, '/healthz', { key: null });
    assert.equal(r.status, 200);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody()),
    });
    assert.equal(res.status, 200, await res.text());
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.headers['x-api-key'], undefined);
    assert.equal(lr.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  });

  test('the request id is generated, returned and forwarded upstream', async () => {
    const before = Date.now();
    const r = await postJson(gw, '/v1/chat/completions', chatBody());
    const after = Date.now();
    const id = r.headers.get('x-request-id');
    assert.match(id, REQUEST_ID_RE);
    // Time first (unix ms in 12 hex digits), so generated ids sort by creation.
    const ms = parseInt(id.slice(0, 12), 16);
    assert.ok(ms >= before - 1 && ms <= after + 1, `${id}: ${ms} not in [${before}, ${after}]`);
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.headers['x-request-id'], id);
    const entry = await gw.waitForLog((e) => e.request_id === id);
    assert.equal(entry.status, 200);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.alias, 'gpt-test');
    assert.equal(entry.provider, 'up');
    assert.equal(entry.key, 'test');
    assert.ok(entry.usage && entry.usage.input_tokens > 0 && entry.usage.output_tokens === 10, JSON.stringify(entry));
    const second = (await postJson(gw, '/v1/chat/completions', chatBody())).headers.get('x-request-id');
    assert.notEqual(second, id);
    assert.ok(second.slice(0, 12) >= id.slice(0, 12), `${second} sorts before ${id}`);
  });

  test('a caller-supplied x-request-id is echoed back and forwarded upstream', async () => {
    const id = 'caller-req-7f1e2d';
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-request-id': id } });
    assert.equal(r.headers.get('x-request-id'), id);
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.headers['x-request-id'], id);
    const err = await getJson(gw, '/v1/nope', { headers: { 'x-request-id': 'caller-err-1' } });
    assert.equal(err.headers.get('x-request-id'), 'caller-err-1');
  });

  test('headers matching forward_headers are forwarded; others are not', async () => {
    await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: { 'x-mock-events': '2', 'x-private-thing': 'nope', cookie: 'session=abc' },
    });
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.headers['x-mock-events'], '2');
    assert.equal(lr.headers['x-private-thing'], undefined);
    assert.equal(lr.headers.cookie, undefined);
  });

  test('a non-stream reply honours forwarded x-mock-events', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-events': '3' } });
    assert.equal(r.json.choices[0].message.content, 'Mock reply w1 w2 w3');
  });

  test('the provider key never appears in responses, the access log or stderr', async () => {
    const responses = [
      await postJson(gw, '/v1/chat/completions', chatBody()),
      await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-status': '401' } }),
      await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-mock-status': '500' } }),
      await postJson(gw, '/v1/embeddings', { model: 'embed-test', input: 'x' }),
    ];
    for (const r of responses) {
      assert.ok(!r.text.includes(PROVIDER_KEY), `provider key in body: ${r.text}`);
      for (const [k, v] of r.headers) {
        assert.ok(!v.includes(PROVIDER_KEY), `provider key in header ${k}`);
      }
    }
    const id = responses[3].headers.get('x-request-id');
    await gw.waitForLog((e) => e.request_id === id);
    assert.ok(!gw.stdout.includes(PROVIDER_KEY), 'provider key in the access log');
    assert.ok(!gw.stderr.includes(PROVIDER_KEY), 'provider key in stderr');
    assert.ok(!gw.stdout.includes(GATEWAY_KEY), 'gateway key in the access log');
  });
});

describe('embeddings', () => {
  test('through the openai adapter (float)', async () => {
    const r = await postJson(gw, '/v1/embeddings', { model: 'embed-test', input: ['a', 'bb'] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.object, 'list');
    assert.equal(r.json.data.length, 2);
    assert.equal(r.json.data[0].embedding.length, 8);
    assert.equal(r.headers.get('x-sluice-provider'), 'up');
    assert.equal(r.headers.get('x-sluice-model'), 'mock-embed-model');
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/v1/embeddings');
    assert.equal(JSON.parse(lr.body).model, 'mock-embed-model');
    assert.equal(lr.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  });

  test('through the openai adapter (base64 + dimensions)', async () => {
    const r = await postJson(gw, '/v1/embeddings', {
      model: 'embed-test',
      input: 'hello',
      encoding_format: 'base64',
      dimensions: 16,
    });
    assert.equal(r.status, 200, r.text);
    const b = Buffer.from(r.json.data[0].embedding, 'base64');
    assert.equal(b.length, 16 * 4);
    let norm = 0;
    for (let i = 0; i < 16; i++) {
      norm += b.readFloatLE(i * 4) ** 2;
    }
    assert.ok(Math.abs(norm - 1) < 1e-3, `norm ${norm}`);
  });

  test('through the built-in mock provider (mock-embed)', async () => {
    const r = await postJson(gw, '/v1/embeddings', { model: 'mock-embed', input: ['one', 'two', 'three'] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.length, 3);
    assert.equal(r.json.data[0].embedding.length, 8);
    assert.equal(r.headers.get('x-sluice-provider'), 'mock');
    assert.equal(r.headers.get('x-sluice-model'), 'mock-embed-1');
    assert.equal((await mock.stats()).requests_total, 0, 'the built-in mock must not call the network');
  });
});

describe('built-in mock provider chat', () => {
  test('non-stream', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'mock-chat' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.object, 'chat.completion');
    assert.match(r.json.choices[0].message.content, /You said: Say hello/);
    assert.equal(r.headers.get('x-sluice-provider'), 'mock');
  });

  test('stream ends with [DONE] and hides the usage chunk unless asked', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody({ model: 'mock-chat', stream: true })),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const { events } = await collectSse(res);
    assert.equal(events.at(-1).data, '[DONE]');
    const chunks = jsonEvents(events);
    assert.ok(chunks.length >= 3);
    assert.ok(!chunks.some((c) => Array.isArray(c.choices) && c.choices.length === 0), 'usage chunk leaked');
    const text = chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
    assert.match(text, /You said: Say hello/);
  });
});

describe('keep-alive, pipelining and 100-continue', () => {
  test('two requests on one keep-alive connection', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    await c.write(rawRequest('GET', '/healthz'));
    const a = await c.readResponse();
    assert.equal(a.status, 200);
    await c.write(rawRequest('GET', '/readyz'));
    const b = await c.readResponse();
    assert.equal(b.status, 200);
    assert.equal(b.json.status, 'ready');
  });

  test('two pipelined requests in one write get two responses in order', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    const body = JSON.stringify(chatBody());
    const first = rawRequest('POST', '/v1/chat/completions', {
      headers: {
        authorization: `Bearer ${GATEWAY_KEY}`,
        'content-type': 'application/json',
        'x-request-id': 'pipe-1',
        'x-mock-latency-ms': '200',
        'x-mock-events': '2',
      },
      body,
    });
    const second = rawRequest('GET', '/v1/models', {
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'x-request-id': 'pipe-2' },
    });
    await c.write(Buffer.concat([first, second]));
    const a = await c.readResponse();
    const b = await c.readResponse();
    assert.equal(a.status, 200, a.text);
    assert.equal(a.headers['x-request-id'], 'pipe-1');
    assert.equal(a.json.choices[0].message.content, 'Mock reply w1 w2');
    assert.equal(b.status, 200, b.text);
    assert.equal(b.headers['x-request-id'], 'pipe-2');
    assert.equal(b.json.object, 'list');
  });

  test('pipelined stream request followed by a second request', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    const first = rawRequest('POST', '/v1/chat/completions', {
      headers: {
        authorization: `Bearer ${GATEWAY_KEY}`,
        'content-type': 'application/json',
        'x-request-id': 'pipe-s1',
        'x-mock-events': '3',
        'x-mock-pace-ms': '30',
      },
      body: JSON.stringify(chatBody({ stream: true })),
    });
    const second = rawRequest('GET', '/healthz', { headers: { 'x-request-id': 'pipe-s2' } });
    await c.write(Buffer.concat([first, second]));
    const a = await c.readResponse();
    assert.equal(a.status, 200);
    assert.equal(a.headers['x-request-id'], 'pipe-s1');
    assert.ok(a.chunkedComplete);
    assert.match(a.text, /data: \[DONE\]\n\n$/);
    const b = await c.readResponse();
    assert.equal(b.status, 200);
    assert.equal(b.headers['x-request-id'], 'pipe-s2');
    assert.deepEqual(b.json, { status: 'ok' });
  });

  test('Expect: 100-continue with a small valid body gets 100 Continue, then the response', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    const body = JSON.stringify(chatBody());
    await c.write(
      rawRequest('POST', '/v1/chat/completions', {
        headers: {
          authorization: `Bearer ${GATEWAY_KEY}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          expect: '100-continue',
        },
      }),
    );
    const interim = await c.readResponse({ timeoutMs: 2000 });
    assert.equal(interim.status, 100);
    assert.match(interim.rawHead, /^HTTP\/1\.1 100 Continue/);
    await c.write(body);
    const final = await c.readResponse();
    assert.equal(final.status, 200, final.text);
    assert.equal(final.json.object, 'chat.completion');
  });

  test('Connection: close is honoured', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    await c.write(rawRequest('GET', '/healthz', { headers: { connection: 'close' } }));
    const r = await c.readResponse();
    assert.equal(r.status, 200);
    assert.equal(r.headers.connection?.toLowerCase(), 'close');
    assert.ok(await c.waitClosed(2000), 'connection not closed');
  });
});
