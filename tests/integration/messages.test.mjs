// POST /v1/messages (Anthropic Messages ingress) over plain HTTP: errors raised before and after
// the body is read come back in Anthropic's error shape, broken upstream streams end with an
// Anthropic `error` event, and the access log meters translated calls like passthrough ones.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  RawConnection,
  collectSse,
  gatewayConfig,
  postJson,
  rawRequest,
  useStack,
} from '../support/harness.mjs';

const MAX_BODY = 8 * 1024;
let gw;
let mock;

useStack({
  config: (m) => {
    const cfg = gatewayConfig(m.baseUrl, {
      server: { max_body_bytes: MAX_BODY },
      provider: { timeout: { first_byte_ms: 1000, total_ms: 2500 } },
    });
    // Same mock, configured like OpenAI's own API for translated output limits.
    cfg.providers.push({
      id: 'like-openai',
      adapter: 'openai',
      base_url: m.baseUrl,
      max_tokens_field: 'max_completion_tokens',
    });
    cfg.routes.push({ alias: 'gpt-reasoning', provider: 'like-openai', model: 'o-mock' });
    return cfg;
  },
}, (s) => ({ gw, mock } = s));

const body = (extra = {}) => ({
  model: 'gpt-test',
  max_tokens: 32,
  messages: [{ role: 'user', content: 'hello there' }],
  ...extra,
});

function assertAnthropicError(r, status, type) {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers.get('content-type'), /application\/json/);
  assert.equal(r.json?.type, 'error', r.text);
  assert.equal(r.json.error.type, type, r.text);
  assert.equal(typeof r.json.error.message, 'string');
  assert.ok(r.json.error.message.length > 0);
}

async function streamMessages(extraHeaders = {}, extraBody = {}) {
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', ...extraHeaders },
    body: JSON.stringify(body({ stream: true, ...extraBody })),
  });
  const { events } = await collectSse(res);
  return { res, events, parsed: events.map((e) => ({ event: e.event, data: JSON.parse(e.data) })) };
}

describe('errors before the model call', () => {
  test('missing key: 401 authentication_error', async () => {
    const r = await postJson(gw, '/v1/messages', body(), { key: null });
    assertAnthropicError(r, 401, 'authentication_error');
  });

  test('x-api-key authenticates', async () => {
    const r = await postJson(gw, '/v1/messages', body(), {
      key: null,
      headers: { 'x-api-key': GATEWAY_KEY },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.type, 'message');
  });

  test('GET: 405 in Anthropic shape', async () => {
    const r = await fetch(`${gw.url}/v1/messages`, { headers: { 'x-api-key': GATEWAY_KEY } });
    const json = await r.json();
    assert.equal(r.status, 405);
    assert.equal(json.type, 'error');
  });

  test('declared body over the limit: 413 request_too_large', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    await c.write(
      rawRequest('POST', '/v1/messages', {
        headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', 'content-length': String(MAX_BODY + 1) },
      }),
    );
    const res = await c.readResponse({ timeoutMs: 2000 });
    assert.equal(res.status, 413);
    const json = JSON.parse(res.body ?? res.text);
    assert.equal(json.type, 'error');
    assert.equal(json.error.type, 'request_too_large');
  });

  for (const [name, b, field] of [
    ['messages missing', { model: 'gpt-test', max_tokens: 5 }, 'messages'],
    ['max_tokens not an integer', body({ max_tokens: 'ten' }), 'max_tokens'],
    ['bad role', body({ messages: [{ role: 'tool', content: 'x' }] }), 'role'],
    ['unknown block type', body({ messages: [{ role: 'user', content: [{ type: 'video' }] }] }), 'type'],
    ['model missing', { max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, 'model'],
  ]) {
    test(`invalid request (${name}): 400 invalid_request_error naming ${field}`, async () => {
      const r = await postJson(gw, '/v1/messages', b);
      assertAnthropicError(r, 400, 'invalid_request_error');
      assert.match(r.json.error.message, new RegExp(field));
    });
  }

  test('not JSON: 400', async () => {
    const r = await postJson(gw, '/v1/messages', 'not json');
    assertAnthropicError(r, 400, 'invalid_request_error');
    const stats = await mock.stats();
    assert.equal(stats.requests_total, 0);
  });
});

describe('translated calls', () => {
  test('max_tokens goes upstream in the field the provider takes', async () => {
    let r = await postJson(gw, '/v1/messages', body({ model: 'gpt-reasoning', max_tokens: 77 }));
    assert.equal(r.status, 200, r.text);
    let sent = JSON.parse((await mock.stats()).last_request.body);
    assert.equal(sent.max_completion_tokens, 77);
    assert.equal(sent.max_tokens, undefined);
    r = await postJson(gw, '/v1/messages', body({ max_tokens: 55 }));
    assert.equal(r.status, 200, r.text);
    sent = JSON.parse((await mock.stats()).last_request.body);
    assert.equal(sent.max_tokens, 55);
    assert.equal(sent.max_completion_tokens, undefined);
  });

  test('access log: api anthropic, usage and finish reason metered', async () => {
    const r = await postJson(gw, '/v1/messages', body());
    assert.equal(r.status, 200);
    const entry = await gw.waitForLog((l) => l.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.api, 'anthropic');
    assert.equal(entry.path, '/v1/messages');
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.finish_reason, 'stop');
    assert.equal(entry.usage.input_tokens, r.json.usage.input_tokens);
    assert.equal(entry.usage.output_tokens, r.json.usage.output_tokens);
    assert.equal(r.headers.get('x-sluice-provider'), 'up');
  });

  test('fields the gateway cannot carry are counted in the access log (schema drift)', async () => {
    const r = await postJson(gw, '/v1/messages', body({ service_tier: 'auto', context_management: {} }));
    assert.equal(r.status, 200, r.text);
    const entry = await gw.waitForLog((l) => l.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.ignored_fields, 2);
  });

  test('stream: Anthropic events in order, usage metered, no [DONE]', async () => {
    const { res, events, parsed } = await streamMessages();
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const names = parsed.map((p) => p.event);
    assert.equal(names[0], 'message_start');
    assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
    for (const p of parsed) {
      assert.equal(p.event, p.data.type);
    }
    assert.ok(!events.some((e) => e.data === '[DONE]'));
    const delta = parsed.at(-2).data;
    assert.equal(delta.delta.stop_reason, 'end_turn');
    const entry = await gw.waitForLog((l) => l.request_id === res.headers.get('x-request-id'));
    assert.equal(entry.api, 'anthropic');
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.usage.output_tokens, delta.usage.output_tokens);
  });

  test('stream cut by the upstream: final event is an Anthropic error, outcome midstream_error', async () => {
    const { res, parsed } = await streamMessages({ 'x-mock-disconnect-after': '3' });
    assert.equal(res.status, 200);
    const last = parsed.at(-1);
    assert.equal(last.event, 'error');
    assert.equal(last.data.type, 'error');
    assert.equal(typeof last.data.error.type, 'string');
    assert.ok(!parsed.some((p) => p.event === 'message_stop'));
    const entry = await gw.waitForLog((l) => l.request_id === res.headers.get('x-request-id'));
    assert.equal(entry.outcome, 'midstream_error');
  });

  test('stream without [DONE] (recorded stream lacking it) is not reported complete', async () => {
    const { parsed } = await streamMessages({ 'x-mock-stall-after': '4', 'x-mock-pace-ms': '1' });
    // The stall ends by the total deadline; the caller gets an error event, not message_stop.
    assert.equal(parsed.at(-1).event, 'error');
  });

  test('streaming request answered with JSON: 502-class error, not a fake stream', async () => {
    const r = await postJson(gw, '/v1/messages', body({ stream: true }), {
      headers: { 'x-mock-fixture': 'chat-completion-text.json' },
    });
    assert.equal(r.json?.type, 'error', r.text);
    assert.ok(r.status >= 500, `status ${r.status}`);
  });

  test('upstream answer that is not a chat completion: 502 api_error', async () => {
    const r = await postJson(gw, '/v1/messages', body(), {
      headers: { 'x-mock-raw-body': '{"unexpected":true}' },
    });
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.type, 'error');
  });

  test('recorded upstream error becomes an Anthropic error with the same status', async () => {
    const r = await postJson(gw, '/v1/messages', body(), {
      headers: { 'x-mock-fixture': 'error-429-insufficient-quota.json', 'x-mock-status': '429' },
    });
    assertAnthropicError(r, 429, 'rate_limit_error');
    assert.match(r.json.error.message, /quota/);
  });
});

describe('what Claude Code sends', () => {
  test('system entries inside messages and output_config.effort are mapped, not rejected', async () => {
    const r = await postJson(gw, '/v1/messages', {
      model: 'gpt-test',
      max_tokens: 32,
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'system', content: 'The available tools changed.' },
        { role: 'user', content: 'second' },
      ],
      output_config: { effort: 'high' },
      context_management: { edits: [] },
    }, { headers: { 'anthropic-beta': 'context-management-2025-06-27' } });
    assert.equal(r.status, 200, r.text);
    const { last_request: lr } = await mock.stats();
    const sent = JSON.parse(lr.body);
    assert.deepEqual(sent.messages.map((m) => m.role), ['user', 'assistant', 'system', 'user']);
    assert.equal(sent.messages[2].content, 'The available tools changed.');
    assert.equal(sent.reasoning_effort, 'high');
    assert.equal(lr.headers['anthropic-beta'], undefined, 'an OpenAI upstream has no use for it');
    const entry = await gw.waitForLog((e) => e.request_id === r.headers.get('x-request-id'));
    assert.equal(entry.ignored_fields, 1, 'context_management: a documented drop, counted');
  });
});
