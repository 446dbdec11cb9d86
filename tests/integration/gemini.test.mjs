// Gemini behind the gateway, both sides: Gemini callers (POST /v1beta/models/{model}:generateContent
// and :streamGenerateContent?alt=sse) and a Gemini upstream (`adapter: gemini`, played by
// sluice-mock-upstream's Gemini endpoints). Gemini callers to the Gemini provider are passed
// through; Anthropic and OpenAI callers to it, and Gemini callers to an OpenAI upstream, are
// translated through the IR.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  collectSse,
  gatewayConfig,
  useStack,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(
  {
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl);
      cfg.providers.push({
        id: 'gem',
        adapter: 'gemini',
        base_url: `${m.url}/v1beta`,
        api_key: PROVIDER_KEY,
        forward_headers: ['x-mock-*'],
      });
      cfg.routes.push({ alias: 'gemini-test', provider: 'gem', model: 'gemini-2.5-flash' });
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

const body = (text = 'hello', extra = {}) => ({
  contents: [{ role: 'user', parts: [{ text }] }],
  ...extra,
});

function gemini(path, payload, { headers = {}, key = GATEWAY_KEY, query = '' } = {}) {
  const h = { 'content-type': 'application/json', ...headers };
  if (key !== null && !query.includes('key=')) {
    h['x-goog-api-key'] = key;
  }
  return fetch(`${gw.url}${path}${query}`, {
    method: 'POST',
    headers: h,
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
}

// The access-log line of one response.
const logOf = (res) => gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));

const generate = (alias, payload, opts) =>
  gemini(`/v1beta/models/${alias}:generateContent`, payload, opts);
const streamGenerate = (alias, payload, opts = {}) =>
  gemini(`/v1beta/models/${alias}:streamGenerateContent`, payload, { query: '?alt=sse', ...opts });

describe('Gemini caller, Gemini upstream: passthrough', () => {
  test('non-stream: the caller bytes reach the upstream unchanged, with the provider key in a header', async () => {
    const raw = '{"contents": [{"role": "user", "parts": [{"text": "hello"}]}], "safetySettings": []}';
    const res = await generate('gemini-test', raw, { headers: { 'x-mock-events': '3' } });
    assert.equal(res.status, 200);
    const answer = await res.json();
    assert.equal(answer.candidates[0].content.parts[0].text, 'Mock reply w1 w2 w3');
    assert.equal(answer.candidates[0].finishReason, 'STOP');
    assert.equal(answer.modelVersion, 'gemini-2.5-flash');

    const { last_request: lr, gemini_keys_in_query: inQuery } = await mock.stats();
    assert.equal(lr.target, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(lr.headers['x-goog-api-key'], PROVIDER_KEY, 'the provider key, not the caller key');
    assert.ok(!JSON.stringify(lr).includes(GATEWAY_KEY));
    assert.equal(inQuery, 0, 'never the key in the upstream URL');
    assert.equal(lr.body, raw, 'byte for byte');

    const entry = await logOf(res);
    assert.equal(entry.api, 'gemini');
    assert.equal(entry.upstream[0].passthrough, true);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.usage.input_tokens, answer.usageMetadata.promptTokenCount);
    assert.equal(entry.usage.output_tokens, answer.usageMetadata.candidatesTokenCount);
  });

  test('the key may come as ?key=, and the access log masks it', async () => {
    const res = await generate('gemini-test', body(), { key: null, query: `?key=${GATEWAY_KEY}` });
    assert.equal(res.status, 200);
    await res.json();
    const entry = await logOf(res);
    assert.equal(entry.path, '/v1beta/models/gemini-test:generateContent?key=[redacted]');
    assert.equal(entry.key, 'test');
    const { last_request: lr, gemini_keys_in_query: inQuery } = await mock.stats();
    assert.equal(inQuery, 0);
    assert.equal(lr.headers['x-goog-api-key'], PROVIDER_KEY);
  });

  test('stream: chunks relayed verbatim, usage and finish read from them', async () => {
    const res = await streamGenerate('gemini-test', body(), { headers: { 'x-mock-events': '4' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const { events, text } = await collectSse(res);
    assert.equal(events.length, 4);
    assert.ok(text.includes('\r\n\r\n'), 'CRLF framing as Google sends it');
    const chunks = events.map((e) => JSON.parse(e.data));
    assert.equal(chunks.map((c) => c.candidates[0].content.parts[0].text).join(''), 'Mock reply w1 w2 w3 w4');
    const last = chunks.at(-1);
    assert.equal(last.candidates[0].finishReason, 'STOP');

    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const entry = await logOf(res);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.finish_reason, 'stop');
    assert.equal(entry.usage.input_tokens, last.usageMetadata.promptTokenCount);
    assert.equal(entry.usage.output_tokens, last.usageMetadata.candidatesTokenCount);
    assert.equal(entry.events, 4);
  });

  test('the raw stream is byte-identical to what the upstream sent', async () => {
    const via = await streamGenerate('gemini-test', body('x'), { headers: { 'x-mock-events': '2' } });
    const direct = await fetch(
      `${mock.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mock-events': '2' },
        body: JSON.stringify(body('x')),
      },
    );
    const norm = (t) => t.replace(/gemini-mock-\d+/g, 'gemini-mock-N');
    assert.equal(norm(await via.text()), norm(await direct.text()));
  });

  test('a stream without alt=sse is a 400 in Gemini\'s shape', async () => {
    const res = await gemini('/v1beta/models/gemini-test:streamGenerateContent', body());
    assert.equal(res.status, 400);
    const err = await res.json();
    assert.equal(err.error.code, 400);
    assert.equal(err.error.status, 'INVALID_ARGUMENT');
    assert.match(err.error.message, /alt=sse/);
    assert.equal((await mock.stats()).requests_total, 0, 'nothing went upstream');
  });

  test("gateway errors are in Gemini's shape", async () => {
    const noKey = await generate('gemini-test', body(), { key: null });
    assert.equal(noKey.status, 401);
    assert.deepEqual((await noKey.json()).error.status, 'UNAUTHENTICATED');

    const badKey = await generate('gemini-test', body(), { key: 'sk-wrong' });
    assert.equal(badKey.status, 401);
    assert.equal((await badKey.json()).error.code, 401);

    const unknown = await generate('no-such-model', body());
    assert.equal(unknown.status, 404);
    const nf = await unknown.json();
    assert.equal(nf.error.status, 'NOT_FOUND');
    assert.match(nf.error.message, /no-such-model/);

    const noContents = await generate('gemini-test', { contents: [] });
    assert.equal(noContents.status, 400);
    assert.equal((await noContents.json()).error.status, 'INVALID_ARGUMENT');
  });

  test('an upstream error is relayed in its own shape, with its status and Retry-After', async () => {
    const res = await generate('gemini-test', body(), {
      headers: { 'x-mock-status': '429', 'x-mock-retry-after': '7' },
    });
    assert.equal(res.status, 429);
    assert.deepEqual(await res.json(), {
      error: { code: 429, message: 'mock injected status 429', status: 'RESOURCE_EXHAUSTED' },
    });
    assert.equal(res.headers.get('retry-after'), '7');
    assert.equal(res.headers.get('x-should-retry'), 'true');

    const refused = await generate('gemini-test', body(), { headers: { 'x-mock-status': '403' } });
    assert.equal(refused.status, 502, "the provider refusing the gateway's key is not the caller's 403");
    const err = await refused.json();
    assert.equal(err.error.code, 502);
    assert.equal(typeof err.error.status, 'string');
    assert.match(err.error.message, /credentials for this provider were refused/);
  });

  test('a stream cut before its finishReason ends with an error object, not silently', async () => {
    const res = await streamGenerate('gemini-test', body(), {
      headers: { 'x-mock-events': '6', 'x-mock-disconnect-after': '2' },
    });
    assert.equal(res.status, 200);
    const { events } = await collectSse(res);
    const last = events.at(-1);
    const err = JSON.parse(last.data);
    assert.equal(typeof err.error.message, 'string');
    assert.equal(err.error.code, 502);
    const entry = await logOf(res);
    assert.equal(entry.outcome, 'midstream_error');
  });

  test('GET /v1beta/models lists the aliases in Gemini\'s shape', async () => {
    const res = await fetch(`${gw.url}/v1beta/models`, { headers: { 'x-goog-api-key': GATEWAY_KEY } });
    assert.equal(res.status, 200);
    const list = await res.json();
    const names = list.models.map((m) => m.name);
    assert.ok(names.includes('models/gemini-test'), JSON.stringify(list));
    const model = list.models.find((m) => m.name === 'models/gemini-test');
    assert.deepEqual(model.supportedGenerationMethods, ['generateContent', 'streamGenerateContent']);
    const anon = await fetch(`${gw.url}/v1beta/models`);
    assert.equal(anon.status, 401);
    assert.equal((await anon.json()).error.status, 'UNAUTHENTICATED');
  });
});

describe('Anthropic caller, Gemini upstream: translation', () => {
  const messages = (payload, headers = {}) =>
    fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(payload),
    });

  test('non-stream: a Messages answer from a GenerateContentResponse', async () => {
    const res = await messages(
      {
        model: 'gemini-test',
        max_tokens: 50,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'hello' }],
      },
      { 'x-mock-events': '3' },
    );
    assert.equal(res.status, 200);
    const msg = await res.json();
    assert.equal(msg.type, 'message');
    assert.deepEqual(msg.content, [{ type: 'text', text: 'Mock reply w1 w2 w3' }]);
    assert.equal(msg.stop_reason, 'end_turn');
    assert.equal(msg.model, 'gemini-2.5-flash');

    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/v1beta/models/gemini-2.5-flash:generateContent');
    const sent = JSON.parse(lr.body);
    assert.deepEqual(sent.contents, [{ role: 'user', parts: [{ text: 'hello' }] }]);
    assert.deepEqual(sent.systemInstruction, { parts: [{ text: 'Be brief.' }] });
    assert.deepEqual(sent.generationConfig, { maxOutputTokens: 50 });
    assert.equal(sent.model, undefined, 'the model is in the URL');

    const entry = await logOf(res);
    assert.equal(entry.upstream[0].passthrough, false);
    assert.equal(entry.usage.input_tokens, msg.usage.input_tokens);
    assert.equal(entry.usage.output_tokens, msg.usage.output_tokens);
  });

  test('stream: Anthropic events from Gemini chunks, usage in message_delta', async () => {
    const res = await messages(
      { model: 'gemini-test', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-mock-events': '3' },
    );
    assert.equal(res.status, 200);
    const { events } = await collectSse(res);
    const names = events.map((e) => e.event);
    assert.equal(names[0], 'message_start');
    assert.equal(names.at(-1), 'message_stop');
    const text = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => JSON.parse(e.data).delta.text)
      .join('');
    assert.equal(text, 'Mock reply w1 w2 w3');
    const delta = JSON.parse(events.find((e) => e.event === 'message_delta').data);
    assert.equal(delta.delta.stop_reason, 'end_turn');
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const entry = await logOf(res);
    assert.equal(entry.outcome, 'complete');
    assert.equal(delta.usage.output_tokens, entry.usage.output_tokens);
    assert.equal(delta.usage.input_tokens, entry.usage.input_tokens);
  });

  test('a tool round trip: tool_use from a functionCall, tool_result back as a functionResponse', async () => {
    const tools = [
      {
        name: 'get_weather',
        description: 'Weather by city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ];
    const first = await (
      await messages({ model: 'gemini-test', max_tokens: 50, tools, messages: [{ role: 'user', content: 'weather?' }] })
    ).json();
    assert.equal(first.stop_reason, 'tool_use', 'Gemini says STOP; a call means tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { mock: true });
    assert.match(use.id, /^toolu_call_gemini-mock-\d+_0$/);
    let { last_request: lr } = await mock.stats();
    assert.deepEqual(JSON.parse(lr.body).tools, [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather by city',
            parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
      },
    ]);

    const second = await messages({
      model: 'gemini-test',
      max_tokens: 50,
      tools,
      tool_choice: { type: 'none' },
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
      ],
    });
    assert.equal(second.status, 200);
    ({ last_request: lr } = await mock.stats());
    const sent = JSON.parse(lr.body);
    assert.deepEqual(sent.contents[1], {
      role: 'model',
      parts: [{ functionCall: { name: 'get_weather', args: { mock: true } } }],
    });
    assert.deepEqual(sent.contents[2], {
      role: 'user',
      parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }],
    });
    assert.deepEqual(sent.toolConfig, { functionCallingConfig: { mode: 'NONE' } });
  });

  test('an upstream error becomes an Anthropic error', async () => {
    const res = await messages(
      { model: 'gemini-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
      { 'x-mock-status': '429' },
    );
    assert.equal(res.status, 429);
    const err = await res.json();
    assert.equal(err.type, 'error');
    assert.equal(err.error.type, 'rate_limit_error');
    assert.equal(err.error.message, 'mock injected status 429');
  });
});

describe('Gemini caller, OpenAI upstream: translation', () => {
  test('non-stream: a GenerateContentResponse from a chat completion', async () => {
    const res = await generate(
      'gpt-test',
      body('hello', { generationConfig: { maxOutputTokens: 30, temperature: 0.2 } }),
      { headers: { 'x-mock-events': '3' } },
    );
    assert.equal(res.status, 200);
    const answer = await res.json();
    assert.equal(answer.candidates[0].content.parts[0].text, 'Mock reply w1 w2 w3');
    assert.equal(answer.candidates[0].finishReason, 'STOP');
    assert.equal(answer.usageMetadata.candidatesTokenCount, 5);
    const { last_request: lr } = await mock.stats();
    assert.match(lr.target, /\/chat\/completions$/);
    const sent = JSON.parse(lr.body);
    assert.equal(sent.model, 'mock-model');
    assert.equal(sent.temperature, 0.2);
    const entry = await logOf(res);
    assert.equal(entry.upstream[0].passthrough, false);
    assert.equal(entry.usage.output_tokens, 5);
  });

  test('stream: Gemini chunks from chat chunks, usage on the last one', async () => {
    const res = await streamGenerate('gpt-test', body(), { headers: { 'x-mock-events': '3' } });
    assert.equal(res.status, 200);
    const { events, text } = await collectSse(res);
    assert.ok(text.endsWith('\r\n\r\n'));
    const chunks = events.map((e) => JSON.parse(e.data));
    const said = chunks.flatMap((c) => c.candidates[0].content.parts.map((p) => p.text ?? '')).join('');
    assert.equal(said, 'Mock reply w1 w2 w3');
    const last = chunks.at(-1);
    assert.equal(last.candidates[0].finishReason, 'STOP');
    const entry = await logOf(res);
    assert.equal(last.usageMetadata.candidatesTokenCount, entry.usage.output_tokens);
    assert.equal(last.usageMetadata.promptTokenCount, entry.usage.input_tokens);
  });

  test('function calling: a functionCall with an id, and the response paired back by name', async () => {
    const tools = [{ functionDeclarations: [{ name: 'lookup', parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' } } } }] }];
    const first = await (await generate('gpt-test', body('find', { tools }))).json();
    const call = first.candidates[0].content.parts[0].functionCall;
    assert.equal(call.name, 'lookup');
    assert.deepEqual(call.args, { mock: true });
    assert.equal(call.id, 'call_mock_1');
    let { last_request: lr } = await mock.stats();
    assert.deepEqual(JSON.parse(lr.body).tools[0].function.parameters, {
      type: 'object',
      properties: { q: { type: 'string' } },
    });

    const second = await generate('gpt-test', {
      contents: [
        { role: 'user', parts: [{ text: 'find' }] },
        first.candidates[0].content,
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'found' } } }] },
      ],
      tools,
      toolConfig: { functionCallingConfig: { mode: 'NONE' } },
    });
    assert.equal(second.status, 200);
    ({ last_request: lr } = await mock.stats());
    const sent = JSON.parse(lr.body);
    const assistant = sent.messages.find((m) => m.role === 'assistant');
    const tool = sent.messages.find((m) => m.role === 'tool');
    assert.equal(assistant.tool_calls[0].id, 'call_mock_1', "the upstream's own id came back");
    assert.equal(tool.tool_call_id, 'call_mock_1');
    assert.equal(tool.content, 'found');
  });
});
