// An Anthropic upstream (`adapter: anthropic`) behind the gateway, played by sluice-mock-upstream's
// Messages endpoint. Anthropic callers are passed through: the upstream receives the caller's
// bytes with only the model replaced, the caller receives the upstream's bytes, and the gateway
// meters the usage it sniffs. Driven by the official @anthropic-ai/sdk where a client matters.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  gatewayConfig,
  splitSse,
  useStack,
  waitFor,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(
  {
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl);
      cfg.providers.push({
        id: 'claude',
        adapter: 'anthropic',
        base_url: m.baseUrl,
        api_key: PROVIDER_KEY,
        forward_headers: ['x-mock-*'],
      });
      cfg.routes.push({ alias: 'claude-test', provider: 'claude', model: 'claude-sonnet-4-5' });
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

const client = () => new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });

describe('Anthropic caller, Anthropic upstream: passthrough', () => {
  test('non-stream: the upstream gets the caller bytes with the model replaced, and its own key', async () => {
    const request = {
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello' }],
      // A field the IR cannot carry reaches an Anthropic upstream untouched.
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
    };
    const msg = await client().messages.create(request, {
      headers: { 'anthropic-beta': 'context-management-2025-06-27', 'x-mock-events': '3' },
    });
    assert.equal(msg.type, 'message');
    assert.equal(msg.content[0].text, 'Mock reply w1 w2 w3');
    assert.ok(msg.usage.input_tokens > 0);

    const { last_request: lr } = await mock.stats();
    assert.match(lr.target, /\/v1\/messages$/);
    assert.equal(lr.headers['x-api-key'], PROVIDER_KEY, 'the provider key, not the caller key');
    assert.ok(!JSON.stringify(lr.headers).includes(GATEWAY_KEY));
    assert.equal(lr.headers['anthropic-version'], '2023-06-01');
    assert.equal(lr.headers['anthropic-beta'], 'context-management-2025-06-27');
    assert.equal(lr.headers.authorization, undefined);
    const sent = JSON.parse(lr.body);
    assert.deepEqual(sent, { ...request, model: 'claude-sonnet-4-5' });

    const entry = await gw.waitForLog((e) => e.alias === 'claude-test' && e.stream === false);
    assert.equal(entry.api, 'anthropic');
    assert.equal(entry.provider, 'claude');
    assert.equal(entry.upstream[0].passthrough, true);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.usage.input_tokens, msg.usage.input_tokens);
    assert.equal(entry.usage.output_tokens, msg.usage.output_tokens);
  });

  test('stream: events relayed verbatim, usage from message_start and message_delta metered', async () => {
    const stream = client().messages.stream(
      { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] },
      { headers: { 'x-mock-events': '4' } },
    );
    const texts = [];
    stream.on('text', (t) => texts.push(t));
    const final = await stream.finalMessage();
    assert.equal(texts.join(''), 'Mock reply w1 w2 w3 w4');
    assert.equal(final.stop_reason, 'end_turn');
    const entry = await gw.waitForLog((e) => e.alias === 'claude-test' && e.stream === true);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.finish_reason, 'stop');
    assert.equal(entry.usage.input_tokens, final.usage.input_tokens);
    assert.equal(entry.usage.output_tokens, final.usage.output_tokens);
    assert.equal(entry.upstream[0].passthrough, true);
  });

  test('the raw stream is byte-identical to what the upstream sent', async () => {
    const req = { model: 'claude-test', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'x' }] };
    const viaGateway = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', 'x-mock-events': '2' },
      body: JSON.stringify(req),
    });
    const direct = await fetch(`${mock.baseUrl}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json', 'x-mock-events': '2' },
      body: JSON.stringify({ ...req, model: 'claude-sonnet-4-5' }),
    });
    // Message ids carry the mock's request number; everything else must match.
    const norm = (t) => t.replace(/msg_mock_\d+/g, 'msg_mock_N');
    assert.equal(norm(await viaGateway.text()), norm(await direct.text()));
  });

  test('an upstream error keeps its Anthropic shape, status and rate-limit headers', async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': GATEWAY_KEY,
        'content-type': 'application/json',
        'x-mock-status': '529',
        'x-mock-set-anthropic-ratelimit-requests-remaining': '0',
        'x-mock-retry-after': '3',
      },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    });
    const body = await res.json();
    assert.equal(res.status, 529);
    assert.deepEqual(body, { type: 'error', error: { type: 'overloaded_error', message: 'mock injected status 529' } });
    assert.equal(res.headers.get('anthropic-ratelimit-requests-remaining'), '0');
    assert.equal(res.headers.get('retry-after'), '3');
    assert.equal(res.headers.get('x-should-retry'), 'true');
    const sdk = client();
    await assert.rejects(
      sdk.messages.create({ model: 'claude-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }, {
        headers: { 'x-mock-status': '400' },
      }),
      (err) => err.status === 400 && err.error?.error?.type === 'invalid_request_error',
    );
  });

  test("the provider refusing the gateway's key is a 502 in Anthropic's shape", async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', 'x-mock-status': '401' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    });
    const body = await res.json();
    assert.equal(res.status, 502);
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'api_error');
    assert.equal(res.headers.get('x-should-retry'), 'false');
  });

  test('an error event mid-stream is relayed once and ends the stream', async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', 'x-mock-stream-error': '2:overloaded_error' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    const events = splitSse(await res.text());
    const errors = events.filter((e) => e.startsWith('event: error'));
    assert.equal(errors.length, 1, events.join(''));
    assert.match(errors[0], /overloaded_error/);
    assert.ok(events.at(-1).startsWith('event: error'), 'nothing after the error');
    const entry = await gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));
    assert.equal(entry.outcome, 'midstream_error');
    assert.equal(entry.error_code, 'upstream_stream_error');
  });

  test('a non-stream answer relayed verbatim logs its finish reason; one cut at max_tokens is truncated', async () => {
    // Regression: non-stream passthrough logged usage only, so an answer cut at its token limit
    // was "complete" with no finish_reason, unlike the same answer streamed.
    const cut = {
      model: 'claude-sonnet-4-5', id: 'msg_cut', type: 'message', role: 'assistant',
      content: [{ type: 'text', text: 'Once upon a' }], stop_reason: 'max_tokens', stop_sequence: null,
      usage: { input_tokens: 11, output_tokens: 4 },
    };
    const chatCut = {
      id: 'chatcmpl-cut', object: 'chat.completion', created: 1, model: 'mock-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Once upon a' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
    };
    const calls = [
      ['/v1/messages', 'claude-test', { 'x-api-key': GATEWAY_KEY, 'x-mock-raw-body': JSON.stringify(cut) }, 'length', 'truncated', 11],
      ['/v1/messages', 'claude-test', { 'x-api-key': GATEWAY_KEY, 'x-mock-tool-name': 'lookup' }, 'tool_calls', 'complete'],
      ['/v1/chat/completions', 'gpt-test', { authorization: `Bearer ${GATEWAY_KEY}`, 'x-mock-raw-body': JSON.stringify(chatCut) }, 'length', 'truncated', 9],
      ['/v1/chat/completions', 'gpt-test', { authorization: `Bearer ${GATEWAY_KEY}` }, 'stop', 'complete'],
    ];
    for (const [path, model, headers, finish, outcome, input] of calls) {
      const body = { model, max_tokens: 4, messages: [{ role: 'user', content: 'tell a story' }] };
      if (headers['x-mock-tool-name']) {
        body.tools = [{ name: 'lookup', input_schema: { type: 'object' } }];
      }
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200, await res.clone().text());
      await res.text();
      const entry = await gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));
      assert.equal(entry.upstream[0].passthrough, true);
      assert.equal(entry.finish_reason, finish, `${path} ${finish}`);
      assert.equal(entry.outcome, outcome, `${path} ${finish}`);
      if (input !== undefined) {
        assert.equal(entry.usage.input_tokens, input);
      }
    }
  });

  test('a caller leaving mid-stream closes the upstream stream', async () => {
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      signal: ac.signal,
      headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', 'x-mock-events': '50', 'x-mock-pace-ms': '50' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    const reader = res.body.getReader();
    await reader.read();
    ac.abort();
    await waitFor(async () => (await mock.stats()).streams_aborted >= 1, { timeoutMs: 3000, message: 'upstream stream closed' });
  });

  test('an embeddings route cannot name an Anthropic provider', async () => {
    const { runBinary, sluiceBin, makeTempDir, removeTempDir, toYaml } = await import('../support/harness.mjs');
    const { writeFileSync } = await import('node:fs');
    const path = await import('node:path');
    const dir = makeTempDir('sluice-cfg-');
    try {
      const cfg = gatewayConfig('http://127.0.0.1:9/v1');
      cfg.providers.push({ id: 'claude', adapter: 'anthropic', api_key: 'x' });
      cfg.routes.push({ alias: 'e', kind: 'embeddings', provider: 'claude', model: 'm' });
      const file = path.join(dir, 'sluice.yaml');
      writeFileSync(file, toYaml(cfg));
      const r = await runBinary(sluiceBin, ['check-config', file]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /cannot serve embeddings routes/);
    } finally {
      removeTempDir(dir);
    }
  });
});

describe('OpenAI caller, Anthropic upstream: translation', () => {
  const openai = async () => {
    const { default: OpenAI } = await import('openai');
    return new OpenAI({ apiKey: GATEWAY_KEY, baseURL: gw.baseUrl, maxRetries: 0 });
  };

  test('non-stream: the upstream gets a Messages request; the SDK gets a chat.completion with exact usage', async () => {
    const client = await openai();
    const r = await client.chat.completions.create(
      {
        model: 'claude-test',
        max_tokens: 50,
        temperature: 0.5,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hello' },
        ],
      },
      { headers: { 'x-mock-events': '3' } },
    );
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.choices[0].message.content, 'Mock reply w1 w2 w3');
    assert.equal(r.choices[0].finish_reason, 'stop');
    const { last_request: lr } = await mock.stats();
    assert.match(lr.target, /\/v1\/messages$/);
    assert.equal(lr.headers['x-api-key'], PROVIDER_KEY);
    const sent = JSON.parse(lr.body);
    assert.equal(sent.model, 'claude-sonnet-4-5');
    assert.equal(sent.max_tokens, 50);
    assert.equal(sent.temperature, 0.5);
    assert.equal(sent.messages.length, 1);
    assert.equal(sent.messages[0].role, 'user');
    const text = (c) => (typeof c === 'string' ? c : c.map((b) => b.text ?? '').join(''));
    assert.equal(text(sent.messages[0].content), 'hello');
    assert.ok(JSON.stringify(sent.system).includes('Be brief.'), JSON.stringify(sent.system));
    const entry = await gw.waitForLog((e) => e.alias === 'claude-test' && e.api === 'openai');
    assert.equal(entry.upstream[0].passthrough, false);
    assert.equal(r.usage.prompt_tokens, entry.usage.input_tokens);
    assert.equal(r.usage.completion_tokens, entry.usage.output_tokens);
  });

  test('stream: chunks in order, usage when asked for, [DONE]', async () => {
    const client = await openai();
    const stream = await client.chat.completions.create(
      { model: 'claude-test', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-mock-events': '4' } },
    );
    let text = '';
    let usage;
    let finish;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, 'Mock reply w1 w2 w3 w4');
    assert.equal(finish, 'stop');
    assert.ok(usage && usage.prompt_tokens > 0 && usage.completion_tokens > 0, JSON.stringify(usage));
    const entry = await gw.waitForLog((e) => e.alias === 'claude-test' && e.api === 'openai' && e.stream === true);
    assert.equal(entry.outcome, 'complete');
    assert.equal(usage.prompt_tokens, entry.usage.input_tokens);
    assert.equal(usage.completion_tokens, entry.usage.output_tokens);
  });

  test('tools: the call comes back with the upstream id, and the result goes back under the same id', async () => {
    const client = await openai();
    const tools = [{ type: 'function', function: { name: 'lookup', description: 'd', parameters: { type: 'object', properties: {} } } }];
    const first = await client.chat.completions.create({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'look it up' }],
      tools,
    });
    const call = first.choices[0].message.tool_calls[0];
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    assert.equal(call.function.name, 'lookup');
    assert.deepEqual(JSON.parse(call.function.arguments), { mock: true });
    await client.chat.completions.create({
      model: 'claude-test',
      tools,
      messages: [
        { role: 'user', content: 'look it up' },
        first.choices[0].message,
        { role: 'tool', tool_call_id: call.id, content: 'found it' },
      ],
    });
    const { last_request: lr } = await mock.stats();
    const sent = JSON.parse(lr.body);
    const assistant = sent.messages.find((m) => m.role === 'assistant');
    const toolUse = assistant.content.find((b) => b.type === 'tool_use');
    const result = sent.messages.at(-1).content.find((b) => b.type === 'tool_result');
    assert.equal(result.tool_use_id, toolUse.id, 'the result answers the call it belongs to');
    assert.equal(sent.tools[0].name, 'lookup');
  });

  test('an upstream error reaches the OpenAI SDK in OpenAI shape with its status', async () => {
    const client = await openai();
    await assert.rejects(
      client.chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'x' }] }, {
        headers: { 'x-mock-status': '529' },
      }),
      (err) => err.status === 529 && typeof err.error?.message === 'string',
    );
  });
});
