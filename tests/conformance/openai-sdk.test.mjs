// The official `openai` Node SDK (7.x) pointed at Sluice: chat (stream and not, with and without
// usage), tools, embeddings (float and base64), models, and every error status mapped to the
// SDK's error classes. maxRetries: 0 everywhere so SDK retries cannot hide gateway behaviour.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import OpenAI from 'openai';

import {
  GATEWAY_KEY,
  LIMITED_KEY,
  PROVIDER_KEY,
  gatewayConfig,
  readFixture,
  splitSse,
  useStack,
  waitFor,
} from '../support/harness.mjs';

const MAX_BODY = 16 * 1024;
const FIRST_BYTE_MS = 1000;

let gw;
let mock;
let client;

function sdk(key = GATEWAY_KEY, opts = {}) {
  return new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0, timeout: 15000, ...opts });
}

useStack({
  config: (m) => {
    const cfg = gatewayConfig(m.baseUrl, {
      server: { max_body_bytes: MAX_BODY },
      provider: { timeout: { first_byte_ms: FIRST_BYTE_MS, total_ms: 20000 } },
    });
    // A second provider on the same mock with a one-connection pool, for 429 shedding.
    cfg.providers.push({
      id: 'tiny',
      adapter: 'openai',
      base_url: m.baseUrl,
      api_key: PROVIDER_KEY,
      forward_headers: ['x-mock-*'],
      pool: { max_connections: 1, acquire_timeout_ms: 50 },
    });
    cfg.routes.push({ alias: 'gpt-tiny', provider: 'tiny', model: 'tiny-model' });
    // An Anthropic upstream on the same mock, for Responses callers translated to Messages.
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
}, (s) => {
  ({ gw, mock } = s);
  client = sdk();
});

const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
        required: ['city'],
        additionalProperties: false,
      },
      strict: true,
    },
  },
  {
    type: 'function',
    function: { name: 'get_time', parameters: { type: 'object', properties: {} } },
  },
];

async function upstreamBody() {
  return JSON.parse((await mock.stats()).last_request.body);
}

describe('chat completions', () => {
  test('non-stream', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-test', messages }, { headers: { 'x-mock-events': '4' } })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.choices[0].message.role, 'assistant');
    assert.equal(data.choices[0].message.content, 'Mock reply w1 w2 w3 w4');
    assert.equal(data.choices[0].finish_reason, 'stop');
    assert.equal(data.usage.completion_tokens, 6);
    assert.equal(response.headers.get('x-sluice-provider'), 'up');
    assert.match(response.headers.get('x-request-id'), /^[0-9a-f]{32}$/);
    const lr = (await mock.stats()).last_request;
    assert.equal(lr.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  });

  test('non-stream through the built-in mock provider', async () => {
    const data = await client.chat.completions.create({ model: 'mock-chat', messages });
    assert.match(data.choices[0].message.content, /You said: What is the weather in Paris\?/);
  });

  test('stream without include_usage: no usage-only chunk, no usage object', async () => {
    const stream = await client.chat.completions.create(
      { model: 'gpt-test', messages, stream: true },
      { headers: { 'x-mock-events': '5' } },
    );
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
    }
    assert.ok(chunks.length >= 7);
    for (const c of chunks) {
      assert.equal(c.object, 'chat.completion.chunk');
      assert.ok(c.choices.length > 0, `usage-only chunk reached the SDK: ${JSON.stringify(c)}`);
      // "usage": null fields are what OpenAI sends when usage was requested upstream; acceptable.
      assert.ok(c.usage === undefined || c.usage === null, `chunk with usage: ${JSON.stringify(c)}`);
    }
    assert.equal(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), 'Mock reply w1 w2 w3 w4 w5');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
    assert.equal((await upstreamBody()).stream_options?.include_usage, true);
  });

  test('stream with include_usage: the last chunk carries usage', async () => {
    const stream = await client.chat.completions.create(
      { model: 'gpt-test', messages, stream: true, stream_options: { include_usage: true } },
      { headers: { 'x-mock-events': '3' } },
    );
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
    }
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage.completion_tokens, 5);
    assert.equal(last.usage.prompt_tokens + last.usage.completion_tokens, last.usage.total_tokens);
  });

  test('stream helper (chat.completions.stream) assembles the final completion', async () => {
    const runner = client.chat.completions.stream({ model: 'gpt-test', messages }, { headers: { 'x-mock-events': '3' } });
    const deltas = [];
    runner.on('content', (delta) => deltas.push(delta));
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0].message.content, 'Mock reply w1 w2 w3');
    assert.equal(deltas.join(''), 'Mock reply w1 w2 w3');
  });

  test('stream through the built-in mock provider', async () => {
    const stream = await client.chat.completions.create({ model: 'mock-chat', messages, stream: true });
    let text = '';
    for await (const chunk of stream) {
      assert.ok(chunk.choices.length > 0);
      text += chunk.choices[0].delta.content ?? '';
    }
    assert.match(text, /You said:/);
  });

  test('a recorded OpenAI stream (text, include_usage) is read by the SDK', async () => {
    const stream = await client.chat.completions.create(
      { model: 'gpt-test', messages, stream: true, stream_options: { include_usage: true } },
      { headers: { 'x-mock-fixture': 'chat-stream-text-include-usage.sse' } },
    );
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
    }
    const expected = splitSse(readFixture('openai-chat/chat-stream-text-include-usage.sse'))
      .map((raw) => raw.replace(/^data: /, '').trim())
      .filter((d) => d !== '[DONE]')
      .map((d) => JSON.parse(d));
    assert.deepEqual(chunks, expected);
  });
});

describe('tools', () => {
  test('non-stream: tool call returned, tools array reaches the upstream unchanged', async () => {
    const data = await client.chat.completions.create({ model: 'gpt-test', messages, tools });
    const choice = data.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.id, 'call_mock_1');
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { mock: true });
    assert.deepEqual((await upstreamBody()).tools, tools);
  });

  test('non-stream: tool_choice naming a function is honoured', async () => {
    const data = await client.chat.completions.create({
      model: 'gpt-test',
      messages,
      tools,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    assert.equal(data.choices[0].message.tool_calls[0].function.name, 'get_time');
    assert.deepEqual((await upstreamBody()).tool_choice, { type: 'function', function: { name: 'get_time' } });
  });

  test('stream: tool call deltas assemble into id, name and arguments', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages, tools, stream: true });
    const calls = {};
    let finish;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      for (const tc of choice.delta.tool_calls ?? []) {
        const acc = (calls[tc.index] ??= { id: undefined, name: undefined, arguments: '' });
        acc.id ??= tc.id;
        acc.name ??= tc.function?.name;
        acc.arguments += tc.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    assert.equal(finish, 'tool_calls');
    assert.deepEqual(calls, { 0: { id: 'call_mock_1', name: 'get_weather', arguments: '{"mock":true}' } });
    assert.deepEqual((await upstreamBody()).tools, tools);
  });

  test('stream helper: finalChatCompletion has the tool call', async () => {
    const runner = client.chat.completions.stream({ model: 'gpt-test', messages, tools });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0].message.tool_calls[0];
    assert.equal(call.id, 'call_mock_1');
    assert.equal(call.function.name, 'get_weather');
    assert.equal(call.function.arguments, '{"mock":true}');
  });

  test('recorded parallel tool calls (real OpenAI stream) assemble through the gateway', async () => {
    const runner = client.chat.completions.stream(
      { model: 'gpt-test', messages, tools },
      { headers: { 'x-mock-fixture': 'chat-stream-parallel-tool-calls.sse' } },
    );
    const final = await runner.finalChatCompletion();
    const calls = final.choices[0].message.tool_calls;
    assert.equal(calls.length, 2);
    assert.equal(calls[0].id, 'call_NS4iQj14cDFwc0BnrKqDHavt');
    assert.equal(calls[0].function.name, 'get_weather');
    assert.doesNotThrow(() => JSON.parse(calls[0].function.arguments));
    assert.equal(calls[1].function.name, 'get_product_name');
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
  });
});

describe('embeddings', () => {
  test('default (SDK asks for base64 and decodes it)', async () => {
    const res = await client.embeddings.create({ model: 'embed-test', input: ['hello', 'world'] });
    assert.equal((await upstreamBody()).encoding_format, 'base64');
    assert.equal(res.data.length, 2);
    const v = res.data[0].embedding;
    assert.ok(Array.isArray(v));
    assert.equal(v.length, 8);
    const norm = v.reduce((s, x) => s + x * x, 0);
    assert.ok(Math.abs(norm - 1) < 1e-3, `norm ${norm}`);
  });

  test('encoding_format float matches the decoded base64 vector', async () => {
    const f = await client.embeddings.create({ model: 'embed-test', input: 'hello', encoding_format: 'float' });
    const b = await client.embeddings.create({ model: 'embed-test', input: 'hello' });
    assert.equal(f.data[0].embedding.length, 8);
    for (let i = 0; i < 8; i++) {
      assert.ok(Math.abs(f.data[0].embedding[i] - b.data[0].embedding[i]) < 1e-6);
    }
    assert.ok(f.usage.prompt_tokens > 0);
  });

  test('encoding_format base64 explicit returns the string', async () => {
    const r = await client.embeddings.create({ model: 'embed-test', input: 'hello', encoding_format: 'base64', dimensions: 4 });
    assert.equal(typeof r.data[0].embedding, 'string');
    assert.equal(Buffer.from(r.data[0].embedding, 'base64').length, 16);
  });

  test('built-in mock provider embeddings', async () => {
    const r = await client.embeddings.create({ model: 'mock-embed', input: ['a', 'b', 'c'] });
    assert.equal(r.data.length, 3);
    assert.equal(r.data[2].index, 2);
    assert.equal(r.data[0].embedding.length, 8);
  });
});

describe('models', () => {
  test('models.list() pages through every alias', async () => {
    const ids = [];
    for await (const m of client.models.list()) {
      ids.push(m.id);
    }
    assert.deepEqual(ids.sort(), ['claude-test', 'embed-test', 'gpt-test', 'gpt-tiny', 'mock-chat', 'mock-embed']);
  });

  test('models.list() with a restricted key', async () => {
    const page = await sdk(LIMITED_KEY).models.list();
    assert.deepEqual(
      page.data.map((m) => m.id),
      ['mock-chat'],
    );
  });

  test('models.retrieve() finds an alias; unknown or forbidden ones are NotFoundError', async () => {
    const m = await client.models.retrieve('gpt-test');
    assert.equal(m.id, 'gpt-test');
    assert.equal(m.object, 'model');
    assert.equal(typeof m.owned_by, 'string');
    for (const [key, model] of [[GATEWAY_KEY, 'no-such-model'], [LIMITED_KEY, 'gpt-test']]) {
      await assert.rejects(sdk(key).models.retrieve(model), (err) => {
        assert.ok(err instanceof OpenAI.NotFoundError, `${err?.constructor?.name}`);
        assert.equal(err.code, 'model_not_found');
        return true;
      });
    }
  });
});

describe('errors map to SDK error classes', () => {
  async function rejects(promise, Cls, check) {
    await assert.rejects(promise, (err) => {
      assert.ok(err instanceof Cls, `expected ${Cls.name}, got ${err?.constructor?.name}: ${err?.message}`);
      check?.(err);
      return true;
    });
  }

  test('400 BadRequestError (gateway validation)', async () => {
    await rejects(client.chat.completions.create({ model: 'gpt-test', messages: [] }), OpenAI.BadRequestError, (e) => {
      assert.equal(e.status, 400);
      assert.equal(e.param, 'messages');
    });
  });

  test('400 BadRequestError (relayed from upstream)', async () => {
    await rejects(
      client.chat.completions.create({ model: 'gpt-test', messages }, { headers: { 'x-mock-status': '400' } }),
      OpenAI.BadRequestError,
      (e) => assert.equal(e.message, '400 mock injected status 400'),
    );
  });

  test('401 AuthenticationError', async () => {
    await rejects(sdk('sk-not-a-valid-gateway-key-00').chat.completions.create({ model: 'gpt-test', messages }), OpenAI.AuthenticationError, (e) => {
      assert.equal(e.status, 401);
      assert.equal(e.code, 'invalid_api_key');
    });
  });

  test('403 PermissionDeniedError', async () => {
    await rejects(sdk(LIMITED_KEY).chat.completions.create({ model: 'gpt-test', messages }), OpenAI.PermissionDeniedError, (e) => {
      assert.equal(e.code, 'model_not_allowed');
    });
  });

  test('404 NotFoundError', async () => {
    await rejects(client.chat.completions.create({ model: 'gpt-nope', messages }), OpenAI.NotFoundError, (e) => {
      assert.equal(e.code, 'model_not_found');
    });
  });

  test('413 APIError with status 413', async () => {
    const big = 'x'.repeat(MAX_BODY * 2);
    await rejects(client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: big }] }), OpenAI.APIError, (e) => {
      assert.equal(e.status, 413, `${e.constructor.name}: ${e.message}`);
    });
  });

  test('429 RateLimitError (relayed, with Retry-After)', async () => {
    await rejects(
      client.chat.completions.create(
        { model: 'gpt-test', messages },
        { headers: { 'x-mock-status': '429', 'x-mock-retry-after': '3' } },
      ),
      OpenAI.RateLimitError,
      (e) => {
        assert.equal(e.status, 429);
        assert.equal(e.headers.get('retry-after'), '3');
      },
    );
  });

  test('429 RateLimitError (upstream pool exhausted)', async () => {
    const slow = client.chat.completions.create({ model: 'gpt-tiny', messages }, { headers: { 'x-mock-latency-ms': '1500' } });
    await waitFor(async () => (await mock.stats()).chat_requests >= 1, { timeoutMs: 2000 });
    await rejects(client.chat.completions.create({ model: 'gpt-tiny', messages }), OpenAI.RateLimitError, (e) => {
      assert.equal(e.code, 'upstream_pool_exhausted');
      assert.ok(e.headers.get('retry-after'));
    });
    const ok = await slow;
    assert.equal(ok.object, 'chat.completion');
  });

  for (const status of [500, 502, 503]) {
    test(`${status} InternalServerError`, async () => {
      await rejects(
        client.chat.completions.create({ model: 'gpt-test', messages }, { headers: { 'x-mock-status': String(status) } }),
        OpenAI.InternalServerError,
        (e) => assert.equal(e.status, status),
      );
    });
  }

  test('non-OpenAI upstream error body still maps to a typed SDK error', async () => {
    await rejects(
      client.chat.completions.create(
        { model: 'gpt-test', messages },
        { headers: { 'x-mock-status': '503', 'x-mock-raw-body': 'upstream overloaded', 'x-mock-content-type': 'text/plain' } },
      ),
      OpenAI.InternalServerError,
      (e) => {
        assert.equal(e.status, 503);
        assert.match(e.message, /'up'/);
      },
    );
  });

  test('504 from the gateway first-byte timeout is an InternalServerError with status 504', async () => {
    await rejects(
      client.chat.completions.create({ model: 'gpt-test', messages }, { headers: { 'x-mock-latency-ms': String(FIRST_BYTE_MS + 2000) } }),
      OpenAI.InternalServerError,
      (e) => {
        assert.equal(e.status, 504);
        assert.equal(e.code, 'upstream_first_byte_timeout');
      },
    );
  });

  test('client-side timeout is APIConnectionTimeoutError', async () => {
    await rejects(
      sdk(GATEWAY_KEY, { timeout: 300 }).chat.completions.create({ model: 'gpt-test', messages }, { headers: { 'x-mock-latency-ms': '800' } }),
      OpenAI.APIConnectionTimeoutError,
    );
  });

  test('a mid-stream upstream break makes the stream iterator throw APIError', async () => {
    const stream = await client.chat.completions.create(
      { model: 'gpt-test', messages, stream: true },
      { headers: { 'x-mock-events': '10', 'x-mock-disconnect-after': '3' } },
    );
    const got = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) {
          got.push(chunk);
        }
      })(),
      (err) => {
        assert.ok(err instanceof OpenAI.APIError, `${err?.constructor?.name}: ${err?.message}`);
        assert.match(err.code ?? err.error?.code ?? '', /^upstream_stream_(broken|truncated)$/);
        return true;
      },
    );
    assert.equal(got.map((c) => c.choices[0]?.delta?.content ?? '').join(''), 'Mock reply w1 w2 w3');
  });

  test('an upstream error on a stream request is thrown before iteration', async () => {
    await rejects(
      client.chat.completions.create({ model: 'gpt-test', messages, stream: true }, { headers: { 'x-mock-status': '503' } }),
      OpenAI.InternalServerError,
    );
  });
});

// client.responses: passed through to an OpenAI-compatible upstream's /responses, translated to
// an Anthropic upstream's Messages API. The usage the SDK reports is what the upstream reported.
describe('responses', () => {
  // What the upstream reports for the request it received, asked again directly (the mock is
  // deterministic): `path` and the body as the gateway sent it.
  async function upstreamUsage(path, headers = {}) {
    const lr = (await mock.stats()).last_request;
    const body = { ...JSON.parse(lr.body), stream: false };
    const res = await fetch(`${mock.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return (await res.json()).usage;
  }

  for (const [model, path, label] of [
    ['gpt-test', '/responses', 'an OpenAI-compatible upstream (passthrough)'],
    ['claude-test', '/messages', 'an Anthropic upstream (translated)'],
  ]) {
    test(`responses.create, non-stream, through ${label}`, async () => {
      const response = await client.responses.create(
        { model, instructions: 'Be brief.', input: 'What is the weather in Paris?' },
        { headers: { 'x-mock-events': '4' } },
      );
      assert.equal(response.object, 'response');
      assert.equal(response.status, 'completed');
      assert.equal(response.output_text, 'Mock reply w1 w2 w3 w4');
      const lr = (await mock.stats()).last_request;
      assert.ok(lr.target.endsWith(path), lr.target);
      const upstream = await upstreamUsage(path, { 'x-mock-events': '4' });
      assert.equal(response.usage.input_tokens, upstream.input_tokens);
      assert.equal(response.usage.output_tokens, upstream.output_tokens);
      assert.equal(response.usage.total_tokens, upstream.input_tokens + upstream.output_tokens);
    });

    test(`responses.create, stream, through ${label}`, async () => {
      const stream = await client.responses.create(
        { model, input: 'What is the weather in Paris?', stream: true },
        { headers: { 'x-mock-events': '5' } },
      );
      const types = [];
      let text = '';
      let completed;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') {
          text += event.delta;
        } else if (event.type === 'response.completed') {
          completed = event.response;
        }
      }
      assert.equal(types[0], 'response.created');
      assert.equal(types.at(-1), 'response.completed');
      assert.equal(text, 'Mock reply w1 w2 w3 w4 w5');
      assert.equal(completed.output[0].content[0].text, text);
      const upstream = await upstreamUsage(path, { 'x-mock-events': '5' });
      assert.equal(completed.usage.input_tokens, upstream.input_tokens);
      assert.equal(completed.usage.output_tokens, upstream.output_tokens);
    });

    test(`responses.stream helper accumulates the final response through ${label}`, async () => {
      // The SDK's accumulator checks every event against the snapshot it builds (item ids,
      // output indexes, content parts): a malformed stream throws here.
      const runner = client.responses.stream(
        {
          model,
          input: 'Weather?',
          tools: [
            { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false },
          ],
        },
        { headers: { 'x-mock-events': '3' } },
      );
      const final = await runner.finalResponse();
      const call = final.output.find((o) => o.type === 'function_call');
      assert.ok(call, JSON.stringify(final.output));
      assert.equal(call.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.arguments), { mock: true });
      assert.ok(final.usage.input_tokens > 0);
    });
  }

  test('responses.retrieve gets a stored response back through the gateway', async () => {
    const created = await client.responses.create({ model: 'gpt-test', input: 'keep this' });
    const again = await client.responses.retrieve(created.id);
    assert.equal(again.id, created.id);
    assert.equal(again.output_text, created.output_text);
    await assert.rejects(client.responses.retrieve('resp_unknown_to_the_gateway'), (e) => {
      assert.ok(e instanceof OpenAI.NotFoundError, e.constructor.name);
      assert.match(e.message, /no record/);
      return true;
    });
  });

  test('previous_response_id to an upstream without Responses is a BadRequestError', async () => {
    const created = await client.responses.create({ model: 'gpt-test', input: 'first' });
    await assert.rejects(
      client.responses.create({ model: 'claude-test', input: 'second', previous_response_id: created.id }),
      (e) => {
        assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
        assert.equal(e.param, 'previous_response_id');
        return true;
      },
    );
  });
});
