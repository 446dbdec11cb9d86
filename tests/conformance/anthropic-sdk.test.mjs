// The official `@anthropic-ai/sdk` pointed at Sluice's POST /v1/messages, with an OpenAI-compatible
// upstream behind it: every request is translated Anthropic -> IR -> OpenAI and every answer
// OpenAI -> IR -> Anthropic. Checks what the SDK sees (messages, streams, tool use, usage, error
// classes) and what the upstream received (the translated request, at the mock). Recorded OpenAI
// streams (tests/fixtures/openai-chat) are replayed by the mock to cover real shapes: parallel
// tool calls, cached-token usage, finish by length. maxRetries: 0 so SDK retries hide nothing.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';

import {
  GATEWAY_KEY,
  LIMITED_KEY,
  PROVIDER_KEY,
  gatewayConfig,
  postJson,
  sseEvents,
  useStack,
  waitFor,
} from '../support/harness.mjs';

let gw;
let mock;
let client;

function sdk(key = GATEWAY_KEY, opts = {}) {
  return new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0, timeout: 15000, ...opts });
}

useStack({
  config: (m) =>
    gatewayConfig(m.baseUrl, {
      provider: { timeout: { first_byte_ms: 2000, total_ms: 20000 } },
    }),
}, (s) => {
  ({ gw, mock } = s);
  client = sdk();
});

async function upstreamBody() {
  const stats = await mock.stats();
  assert.ok(stats.last_request, 'the upstream saw a request');
  assert.equal(stats.last_request.target, '/v1/chat/completions');
  return JSON.parse(stats.last_request.body);
}

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

// Mock reply text for x-mock-events N: "Mock reply w1 ... wN".
const mockText = (n = 8) => ['Mock reply', ...Array.from({ length: n }, (_, i) => `w${i + 1}`)].join(' ');

describe('messages.create (non-stream)', () => {
  test('text answer: message shape, text, stop_reason, usage', async () => {
    const msg = await client.messages.create({
      model: 'gpt-test',
      max_tokens: 64,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    assert.equal(msg.type, 'message');
    assert.equal(msg.role, 'assistant');
    assert.match(msg.id, /^msg_/);
    assert.equal(msg.model, 'mock-model');
    assert.deepEqual(msg.content, [{ type: 'text', text: mockText() }]);
    assert.equal(msg.stop_reason, 'end_turn');
    assert.equal(msg.stop_sequence, null);
    // Mock: prompt_tokens = chars/4 + 1 over "You are terse." + "Say hello" (23 chars) = 6,
    // completion_tokens = events + 2 = 10; no cached tokens.
    assert.equal(msg.usage.input_tokens, 6);
    assert.equal(msg.usage.output_tokens, 10);
    assert.equal(msg.usage.cache_read_input_tokens, 0);
  });

  test('the upstream receives the equivalent OpenAI request', async () => {
    await client.messages.create({
      model: 'gpt-test',
      max_tokens: 100,
      temperature: 0.5,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'How are you?' },
      ],
    });
    const body = await upstreamBody();
    assert.equal(body.model, 'mock-model');
    assert.equal(body.max_tokens, 100);
    assert.equal(body.temperature, 0.5);
    assert.equal(body.top_p, 0.9);
    assert.deepEqual(body.stop, ['END']);
    assert.equal(body.user, 'user-42');
    assert.ok(!body.stream, 'not streamed');
    assert.deepEqual(
      body.messages.map((m) => [m.role, typeof m.content === 'string' ? m.content : m.content]),
      [
        ['system', 'Be brief.'],
        ['user', 'Hi'],
        ['assistant', 'Hello!'],
        ['user', 'How are you?'],
      ],
    );
  });

  test('tool use: the call comes back as a tool_use block with parsed input', async () => {
    const msg = await client.messages.create({
      model: 'gpt-test',
      max_tokens: 64,
      tools: [weatherTool],
      tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    assert.equal(msg.stop_reason, 'tool_use');
    assert.equal(msg.content.length, 1);
    const [block] = msg.content;
    assert.equal(block.type, 'tool_use');
    assert.equal(block.name, 'get_weather');
    assert.deepEqual(block.input, { mock: true });
    assert.match(block.id, /^toolu_/);
    const body = await upstreamBody();
    assert.deepEqual(body.tools, [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather for a city',
          parameters: weatherTool.input_schema,
        },
      },
    ]);
    assert.deepEqual(body.tool_choice, { type: 'function', function: { name: 'get_weather' } });
  });

  test('tool results round trip: ids match between the call and its result upstream', async () => {
    const first = await client.messages.create({
      model: 'gpt-test',
      max_tokens: 64,
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const call = first.content.find((b) => b.type === 'tool_use');
    assert.ok(call);
    const again = await client.messages.create({
      model: 'gpt-test',
      max_tokens: 64,
      tools: [weatherTool],
      tool_choice: { type: 'none' },
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: call.id, content: '18 C, sunny' },
            { type: 'text', text: 'Thanks. Summarise.' },
          ],
        },
      ],
    });
    assert.equal(again.content[0].type, 'text');
    const body = await upstreamBody();
    assert.equal(body.tool_choice, 'none');
    const assistant = body.messages.find((m) => m.role === 'assistant');
    assert.equal(assistant.tool_calls.length, 1);
    const toolMsg = body.messages.find((m) => m.role === 'tool');
    assert.equal(toolMsg.tool_call_id, assistant.tool_calls[0].id, 'result answers the call');
    assert.equal(toolMsg.content, '18 C, sunny');
    assert.deepEqual(JSON.parse(assistant.tool_calls[0].function.arguments), { mock: true });
    // The tool message comes right after the assistant turn, before the user's text.
    const idx = body.messages.indexOf(toolMsg);
    assert.equal(body.messages[idx - 1], assistant);
    assert.equal(body.messages[idx + 1].role, 'user');
  });

  test('images: base64 becomes a data URL, url stays a URL', async () => {
    await client.messages.create({
      model: 'gpt-test',
      max_tokens: 16,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'text', text: 'What are these?' },
          ],
        },
      ],
    });
    const body = await upstreamBody();
    const parts = body.messages[0].content;
    assert.deepEqual(parts[0], { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } });
    assert.deepEqual(parts[1], { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } });
    assert.deepEqual(parts[2], { type: 'text', text: 'What are these?' });
  });

  test('the in-process mock provider answers Anthropic callers too', async () => {
    const msg = await client.messages.create({
      model: 'mock-chat',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'ping' }],
    });
    assert.equal(msg.type, 'message');
    assert.equal(msg.content[0].type, 'text');
    assert.ok(msg.content[0].text.length > 0);
    assert.equal(msg.stop_reason, 'end_turn');
    assert.ok(msg.usage.output_tokens > 0);
  });

  test('cached prompt tokens: input_tokens excludes the cache read (recorded OpenAI answer)', async () => {
    const msg = await client.messages.create(
      { model: 'gpt-test', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] },
      { headers: { 'x-mock-fixture': 'chat-completion-cached-tokens.json' } },
    );
    // Fixture: prompt_tokens 10122 of which cached_tokens 9984.
    assert.equal(msg.usage.input_tokens, 10122 - 9984);
    assert.equal(msg.usage.cache_read_input_tokens, 9984);
  });
});

describe('messages.stream', () => {
  test('text stream: event order, text, final message and usage', async () => {
    const stream = client.messages.stream({
      model: 'gpt-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    const types = [];
    let text = '';
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') {
        text += ev.delta.text;
      }
    }
    const final = await stream.finalMessage();
    assert.equal(text, mockText());
    assert.equal(types[0], 'message_start');
    assert.equal(types[1], 'content_block_start');
    assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    assert.equal(types.filter((t) => t === 'content_block_delta').length, 8);
    assert.equal(final.content.length, 1);
    assert.equal(final.content[0].type, 'text');
    assert.equal(final.content[0].text, mockText());
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.usage.output_tokens, 10);
    const body = await upstreamBody();
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
  });

  test('tool call stream: one tool_use block with complete input', async () => {
    const stream = client.messages.stream({
      model: 'gpt-test',
      max_tokens: 64,
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Weather?' }],
    });
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    assert.equal(final.content.length, 1);
    assert.equal(final.content[0].type, 'tool_use');
    assert.equal(final.content[0].name, 'get_weather');
    assert.deepEqual(final.content[0].input, { mock: true });
    assert.match(final.content[0].id, /^toolu_/);
  });

  test('recorded parallel tool calls become contiguous blocks with full arguments', async () => {
    const stream = client.messages.stream(
      { model: 'gpt-test', max_tokens: 64, tools: [weatherTool], messages: [{ role: 'user', content: 'x' }] },
      { headers: { 'x-mock-fixture': 'chat-stream-parallel-tool-calls.sse' } },
    );
    const order = [];
    for await (const ev of stream) {
      if (ev.type.startsWith('content_block')) {
        order.push(`${ev.type}:${ev.index}`);
      }
    }
    const final = await stream.finalMessage();
    const tools = final.content.filter((b) => b.type === 'tool_use');
    assert.equal(tools.length, 2);
    assert.deepEqual(
      tools.map((t) => t.name),
      ['get_weather', 'get_product_name'],
    );
    for (const t of tools) {
      assert.equal(typeof t.input, 'object');
      assert.match(t.id, /^toolu_/);
    }
    assert.notEqual(tools[0].id, tools[1].id);
    // Blocks never interleave: each block's start, deltas and stop are contiguous.
    const seen = new Set();
    let open = null;
    for (const o of order) {
      const [type, idx] = o.split(':');
      if (type === 'content_block_start') {
        assert.equal(open, null, `block ${idx} opened while ${open} open`);
        assert.ok(!seen.has(idx));
        seen.add(idx);
        open = idx;
      } else if (type === 'content_block_delta') {
        assert.equal(idx, open);
      } else {
        assert.equal(idx, open);
        open = null;
      }
    }
    assert.equal(final.stop_reason, 'tool_use');
    assert.ok(final.usage.output_tokens > 0);
  });

  test('recorded stream cut by length maps to max_tokens with reasoning-only usage', async () => {
    const stream = client.messages.stream(
      { model: 'gpt-test', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] },
      { headers: { 'x-mock-fixture': 'chat-stream-finish-length-usage.sse' } },
    );
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'max_tokens');
    assert.equal(final.usage.output_tokens, 100);
  });

  test('raw stream over fetch: event names match data types, [DONE] never leaks', async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    let count = 0;
    for await (const ev of sseEvents(res)) {
      assert.notEqual(ev.data, '[DONE]');
      const data = JSON.parse(ev.data);
      assert.equal(ev.event, data.type, 'event: line matches the payload type');
      count += 1;
    }
    assert.ok(count >= 5);
  });

  test('a stream broken mid-way ends with an error event the SDK throws', async () => {
    const stream = client.messages.stream(
      { model: 'gpt-test', max_tokens: 32, messages: [{ role: 'user', content: 'x' }] },
      { headers: { 'x-mock-disconnect-after': '3' } },
    );
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    await assert.rejects(stream.finalMessage(), (err) => {
      assert.ok(err instanceof Anthropic.APIError || err instanceof Error);
      return true;
    });
    assert.ok(text.length > 0, 'text before the break reached the caller');
  });

  test('client abort cancels the upstream stream', async () => {
    const controller = new AbortController();
    const stream = client.messages.stream(
      { model: 'gpt-test', max_tokens: 32, messages: [{ role: 'user', content: 'x' }] },
      { headers: { 'x-mock-events': '1000', 'x-mock-pace-ms': '20' }, signal: controller.signal },
    );
    let deltas = 0;
    await assert.rejects(
      (async () => {
        for await (const ev of stream) {
          if (ev.type === 'content_block_delta' && ++deltas === 3) {
            controller.abort();
          }
        }
      })(),
    );
    await waitFor(async () => (await mock.stats()).streams_aborted === 1, {
      timeoutMs: 3000,
      message: 'upstream stream aborted',
    });
  });
});

describe('models.list', () => {
  test('lists the aliases the key may use, in Anthropic shape', async () => {
    const ids = [];
    for await (const m of client.models.list()) {
      assert.equal(m.type, 'model');
      assert.equal(typeof m.display_name, 'string');
      assert.ok(!Number.isNaN(Date.parse(m.created_at)));
      ids.push(m.id);
    }
    assert.deepEqual(ids.sort(), ['embed-test', 'gpt-test', 'mock-chat', 'mock-embed']);
    const limited = [];
    for await (const m of sdk(LIMITED_KEY).models.list()) {
      limited.push(m.id);
    }
    assert.deepEqual(limited, ['mock-chat']);
  });

  test('models.retrieve() in Anthropic shape; unknown or forbidden ones are NotFoundError', async () => {
    const m = await client.models.retrieve('gpt-test');
    assert.equal(m.type, 'model');
    assert.equal(m.id, 'gpt-test');
    assert.ok(!Number.isNaN(Date.parse(m.created_at)));
    for (const [key, model] of [[GATEWAY_KEY, 'no-such-model'], [LIMITED_KEY, 'gpt-test']]) {
      await assert.rejects(sdk(key).models.retrieve(model), (err) => {
        assert.ok(err instanceof Anthropic.NotFoundError, `${err?.constructor?.name}`);
        assert.equal(err.error?.error?.type, 'not_found_error');
        return true;
      });
    }
  });

  test('an unknown endpoint answers an Anthropic SDK in Anthropic shape', async () => {
    const r = await postJson(gw, '/v1/messages/batches', {}, { headers: { 'anthropic-version': '2023-06-01' } });
    assert.equal(r.status, 404);
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, 'not_found_error');
  });

  test('bad key on the models list: AuthenticationError in Anthropic shape', async () => {
    await assert.rejects(sdk('sk-nope').models.list(), (err) => {
      assert.ok(err instanceof Anthropic.AuthenticationError);
      assert.equal(err.error?.error?.type, 'authentication_error');
      return true;
    });
  });
});

describe('errors in Anthropic shape', () => {
  function errorType(err) {
    return err?.error?.error?.type;
  }

  test('bad key -> AuthenticationError / authentication_error', async () => {
    await assert.rejects(
      sdk('sk-wrong').messages.create({ model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      (err) => {
        assert.ok(err instanceof Anthropic.AuthenticationError);
        assert.equal(err.status, 401);
        assert.equal(errorType(err), 'authentication_error');
        assert.equal(err.error.type, 'error');
        return true;
      },
    );
  });

  test('model the key may not use -> PermissionDeniedError', async () => {
    await assert.rejects(
      sdk(LIMITED_KEY).messages.create({ model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      (err) => {
        assert.ok(err instanceof Anthropic.PermissionDeniedError);
        assert.equal(errorType(err), 'permission_error');
        return true;
      },
    );
  });

  test('unknown model -> NotFoundError / not_found_error', async () => {
    await assert.rejects(
      client.messages.create({ model: 'nope', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      (err) => {
        assert.ok(err instanceof Anthropic.NotFoundError);
        assert.equal(errorType(err), 'not_found_error');
        assert.match(err.error.error.message, /nope/);
        return true;
      },
    );
  });

  test('invalid request -> BadRequestError / invalid_request_error naming the field', async () => {
    await assert.rejects(
      client.messages.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
      (err) => {
        assert.ok(err instanceof Anthropic.BadRequestError);
        assert.equal(errorType(err), 'invalid_request_error');
        assert.match(err.error.error.message, /max_tokens/);
        return true;
      },
    );
    const stats = await mock.stats();
    assert.equal(stats.requests_total, 0, 'nothing reached the upstream');
  });

  test('malformed JSON -> 400 invalid_request_error', async () => {
    const r = await postJson(gw, '/v1/messages', '{"model":', { headers: {} });
    assert.equal(r.status, 400);
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, 'invalid_request_error');
  });

  test('upstream 429 -> RateLimitError with Retry-After passed through', async () => {
    await assert.rejects(
      client.messages.create(
        { model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-mock-status': '429', 'x-mock-retry-after': '7' } },
      ),
      (err) => {
        assert.ok(err instanceof Anthropic.RateLimitError);
        assert.equal(errorType(err), 'rate_limit_error');
        assert.equal(err.headers.get('retry-after'), '7');
        return true;
      },
    );
  });

  test('upstream 500 -> InternalServerError / api_error', async () => {
    await assert.rejects(
      client.messages.create(
        { model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-mock-status': '500' } },
      ),
      (err) => {
        assert.ok(err instanceof Anthropic.InternalServerError);
        assert.equal(errorType(err), 'api_error');
        return true;
      },
    );
  });

  test('upstream error body message is carried over', async () => {
    await assert.rejects(
      client.messages.create(
        { model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-mock-fixture': 'error-400-unsupported-parameter.json', 'x-mock-status': '400' } },
      ),
      (err) => {
        assert.ok(err instanceof Anthropic.BadRequestError);
        assert.equal(errorType(err), 'invalid_request_error');
        assert.match(err.error.error.message, /max_tokens/);
        return true;
      },
    );
  });

  test('upstream first-byte timeout -> 504 timeout_error', async () => {
    await assert.rejects(
      client.messages.create(
        { model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-mock-first-byte-ms': '5000' } },
      ),
      (err) => {
        assert.equal(err.status, 504);
        assert.equal(errorType(err), 'timeout_error');
        return true;
      },
    );
  });

  // Some providers echo the credential they refused; the gateway must not pass it on.
  test('provider credentials never reach the caller, even when the provider echoes them', async () => {
    const echoed = JSON.stringify({
      error: { message: `Incorrect API key provided: ${PROVIDER_KEY}.`, type: 'invalid_request_error', code: 'invalid_api_key' },
    });
    for (const status of ['400', '401']) {
      const r = await postJson(gw, '/v1/messages', { model: 'gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }, {
        headers: { 'x-mock-status': status, 'x-mock-raw-body': echoed },
      });
      assert.equal(r.status, status === '401' ? 502 : 400, r.text);
      assert.ok(!r.text.includes(PROVIDER_KEY), r.text);
      for (const [k, v] of r.headers) {
        assert.ok(!v.includes(PROVIDER_KEY), `provider key in header ${k}`);
      }
      assert.equal(r.json.type, 'error');
    }
  });

});
