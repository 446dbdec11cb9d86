// The official Google Gen AI SDK (`@google/genai`) pointed at Sluice's Gemini endpoints
// (httpOptions.baseUrl = the gateway; the SDK calls /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse with x-goog-api-key). Behind it: a Gemini provider (passthrough;
// sluice-mock-upstream answers generated replies or replays the recorded Gemini fixtures), and
// an OpenAI and an Anthropic provider (translation through the IR). Checks what the SDK sees
// (text, streams, function calls, usage, errors) and what the upstream received.

import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';

import { GoogleGenAI } from '@google/genai';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  fixturesDir,
  gatewayConfig,
  readFixture,
  useStack,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(
  {
    mockOpts: { fixtures: path.join(fixturesDir, 'gemini') },
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl);
      const upstream = { api_key: PROVIDER_KEY, forward_headers: ['x-mock-*'] };
      cfg.providers.push({ id: 'gem', adapter: 'gemini', base_url: `${m.url}/v1beta`, ...upstream });
      cfg.providers.push({ id: 'claude', adapter: 'anthropic', base_url: m.baseUrl, ...upstream });
      cfg.routes.push({ alias: 'gemini-test', provider: 'gem', model: 'gemini-2.5-flash' });
      cfg.routes.push({ alias: 'claude-test', provider: 'claude', model: 'claude-sonnet-4-5' });
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

function sdk(headers = {}, key = GATEWAY_KEY) {
  return new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url, headers } });
}

// The access-log line of the request that answered `res` (a response or a stream chunk: the SDK
// keeps the HTTP headers in sdkHttpResponse).
function logOf(res) {
  const h = res.sdkHttpResponse?.headers ?? {};
  const id = typeof h.get === 'function' ? h.get('x-request-id') : h['x-request-id'];
  assert.ok(id, 'the gateway sent x-request-id');
  return gw.waitForLog((e) => e.request_id === id);
}

// Mock reply text for x-mock-events N: "Mock reply w1 ... wN".
const mockText = (n) => ['Mock reply', ...Array.from({ length: n }, (_, i) => `w${i + 1}`)].join(' ');

const weather = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Current weather for a city',
      parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ],
};

describe('generateContent', () => {
  test('a Gemini provider: text, finish reason, usage, the request as the SDK wrote it', async () => {
    const res = await sdk({ 'x-mock-events': '3' }).models.generateContent({
      model: 'gemini-test',
      contents: 'Say hello',
      config: { systemInstruction: 'Be terse.', maxOutputTokens: 64, temperature: 0.3 },
    });
    assert.equal(res.text, mockText(3));
    assert.equal(res.candidates[0].finishReason, 'STOP');
    assert.equal(res.modelVersion, 'gemini-2.5-flash');
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(lr.headers['x-goog-api-key'], PROVIDER_KEY);
    const sent = JSON.parse(lr.body);
    assert.deepEqual(sent.contents, [{ role: 'user', parts: [{ text: 'Say hello' }] }]);
    assert.deepEqual(sent.systemInstruction, { role: 'user', parts: [{ text: 'Be terse.' }] });
    assert.deepEqual(sent.generationConfig, { maxOutputTokens: 64, temperature: 0.3 });
    const entry = await logOf(res);
    assert.equal(entry.usage.input_tokens, res.usageMetadata.promptTokenCount);
    assert.equal(entry.usage.output_tokens, res.usageMetadata.candidatesTokenCount);
  });

  test('usage seen by the client is what the upstream reported: thoughts and cached content', async () => {
    const recorded = JSON.parse(readFixture('gemini/generate-content-cached-content.json'));
    const res = await sdk({ 'x-mock-fixture': 'generate-content-cached-content.json' }).models.generateContent({
      model: 'gemini-test',
      contents: 'What is the capital of France?',
    });
    assert.equal(res.text, 'Paris.');
    assert.deepEqual(res.usageMetadata, recorded.usageMetadata);
    // Metered in IR terms: thoughts are output outside candidatesTokenCount, cached content is
    // inside promptTokenCount.
    const entry = await logOf(res);
    assert.deepEqual(entry.usage, {
      input_tokens: 3520,
      output_tokens: 2 + 42,
      cache_read_tokens: 3512,
      cache_write_tokens: 0,
      reasoning_tokens: 42,
    });
  });

  test('an OpenAI provider: the answer translated into a GenerateContentResponse', async () => {
    const res = await sdk({ 'x-mock-events': '2' }).models.generateContent({
      model: 'gpt-test',
      contents: 'Say hello',
      config: { maxOutputTokens: 20, stopSequences: ['END'] },
    });
    assert.equal(res.text, mockText(2));
    assert.equal(res.candidates[0].finishReason, 'STOP');
    const entry = await logOf(res);
    assert.equal(entry.api, 'gemini');
    assert.equal(entry.upstream[0].passthrough, false);
    assert.equal(res.usageMetadata.promptTokenCount, entry.usage.input_tokens);
    assert.equal(res.usageMetadata.candidatesTokenCount, entry.usage.output_tokens);
    assert.equal(res.usageMetadata.totalTokenCount, entry.usage.input_tokens + entry.usage.output_tokens);
    const sent = JSON.parse((await mock.stats()).last_request.body);
    assert.deepEqual(sent.stop, ['END']);
  });

  test('errors reach the SDK as ApiError with the status', async () => {
    await assert.rejects(
      sdk({ 'x-mock-status': '429' }).models.generateContent({ model: 'gemini-test', contents: 'x' }),
      (err) => err.status === 429 && /RESOURCE_EXHAUSTED/.test(err.message),
    );
    await assert.rejects(
      sdk().models.generateContent({ model: 'no-such-model', contents: 'x' }),
      (err) => err.status === 404 && /NOT_FOUND/.test(err.message),
    );
    await assert.rejects(
      sdk({}, 'sk-wrong-key').models.generateContent({ model: 'gemini-test', contents: 'x' }),
      (err) => err.status === 401 && /UNAUTHENTICATED/.test(err.message),
    );
  });
});

describe('generateContentStream', () => {
  test('a Gemini provider: chunks as they come, usage on the last', async () => {
    const stream = await sdk({ 'x-mock-events': '4' }).models.generateContentStream({
      model: 'gemini-test',
      contents: 'Count',
    });
    const texts = [];
    let last;
    for await (const chunk of stream) {
      texts.push(chunk.text);
      last = chunk;
    }
    assert.equal(texts.length, 4);
    assert.equal(texts.join(''), mockText(4));
    assert.equal(last.candidates[0].finishReason, 'STOP');
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const entry = await logOf(last);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.usage.input_tokens, last.usageMetadata.promptTokenCount);
    assert.equal(entry.usage.output_tokens, last.usageMetadata.candidatesTokenCount);
  });

  test('a recorded stream with thinking: what the SDK reads is what Google sent', async () => {
    const recorded = readFixture('gemini/stream-text-thoughts-usage.sse')
      .split('\r\n\r\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)));
    const stream = await sdk({ 'x-mock-fixture': 'stream-text-thoughts-usage.sse' }).models.generateContentStream({
      model: 'gemini-test',
      contents: 'Count to 30',
    });
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
    }
    assert.equal(chunks.map((c) => c.text).join(''), recorded.map((r) => r.candidates[0].content.parts[0].text).join(''));
    assert.deepEqual(chunks.at(-1).usageMetadata, recorded.at(-1).usageMetadata);
    const entry = await logOf(chunks.at(-1));
    assert.equal(entry.usage.output_tokens, 80 + 35, 'thoughts outside candidatesTokenCount');
    assert.equal(entry.usage.reasoning_tokens, 35);
  });

  test('a stream cut before its finishReason raises in the SDK, not a silent end', async () => {
    const stream = await sdk({ 'x-mock-events': '6', 'x-mock-disconnect-after': '2' }).models.generateContentStream({
      model: 'gemini-test',
      contents: 'Count',
    });
    const texts = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) {
          texts.push(chunk.text);
        }
      })(),
      (err) => err.status === 502 && /INTERNAL/.test(err.message),
    );
    assert.equal(texts.join(''), mockText(6).split(' w3')[0]);
  });

  test('an Anthropic provider: Gemini chunks from Messages events, usage on the last chunk', async () => {
    const stream = await sdk({ 'x-mock-events': '3' }).models.generateContentStream({
      model: 'claude-test',
      contents: 'hello',
      config: { maxOutputTokens: 40 },
    });
    const texts = [];
    let last;
    for await (const chunk of stream) {
      texts.push(chunk.text ?? '');
      last = chunk;
    }
    assert.equal(texts.join(''), mockText(3));
    assert.equal(last.candidates[0].finishReason, 'STOP');
    const entry = await logOf(last);
    assert.equal(entry.api, 'gemini');
    assert.equal(entry.outcome, 'complete');
    assert.equal(last.usageMetadata.promptTokenCount, entry.usage.input_tokens);
    assert.equal(last.usageMetadata.candidatesTokenCount, entry.usage.output_tokens);
    const { last_request: lr } = await mock.stats();
    assert.match(lr.target, /\/v1\/messages$/);
    assert.equal(JSON.parse(lr.body).max_tokens, 40);
  });
});

describe('function calling', () => {
  for (const [alias, upstream] of [
    ['gemini-test', 'a Gemini provider'],
    ['gpt-test', 'an OpenAI provider'],
    ['claude-test', 'an Anthropic provider'],
  ]) {
    test(`a round trip through ${upstream}: functionCall, then functionResponse`, async () => {
      const ai = sdk();
      const contents = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
      const first = await ai.models.generateContent({ model: alias, contents, config: { tools: [weather] } });
      const calls = first.functionCalls;
      assert.equal(calls.length, 1);
      assert.equal(calls[0].name, 'get_weather');
      assert.deepEqual(calls[0].args, { mock: true });

      contents.push(first.candidates[0].content);
      contents.push({
        role: 'user',
        parts: [{ functionResponse: { name: calls[0].name, id: calls[0].id, response: { output: 'sunny' } } }],
      });
      const second = await sdk({ 'x-mock-events': '2' }).models.generateContent({
        model: alias,
        contents,
        config: {
          tools: [weather],
          toolConfig: { functionCallingConfig: { mode: 'NONE' } },
        },
      });
      assert.equal(second.text, mockText(2));

      const sent = JSON.parse((await mock.stats()).last_request.body);
      if (alias === 'gemini-test') {
        assert.deepEqual(sent.contents, JSON.parse(JSON.stringify(contents)), 'passed through');
      } else if (alias === 'gpt-test') {
        const call = sent.messages.find((m) => m.role === 'assistant').tool_calls[0];
        const result = sent.messages.find((m) => m.role === 'tool');
        assert.equal(calls[0].id, 'call_mock_1', "the upstream's id reaches the SDK");
        assert.equal(call.id, 'call_mock_1');
        assert.equal(result.tool_call_id, call.id);
        assert.equal(result.content, 'sunny');
      } else {
        const use = sent.messages[1].content.find((b) => b.type === 'tool_use');
        const result = sent.messages[2].content.find((b) => b.type === 'tool_result');
        assert.equal(use.id, 'toolu_mock_1');
        assert.equal(result.tool_use_id, use.id);
        assert.equal(result.content, 'sunny');
      }
    });
  }

  test('a streamed function call from an OpenAI provider arrives as one whole part', async () => {
    const stream = await sdk().models.generateContentStream({
      model: 'gpt-test',
      contents: 'Weather in Paris?',
      config: { tools: [weather] },
    });
    const calls = [];
    let last;
    for await (const chunk of stream) {
      calls.push(...(chunk.functionCalls ?? []));
      last = chunk;
    }
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].args, { mock: true });
    assert.equal(calls[0].name, 'get_weather');
    assert.equal(last.candidates[0].finishReason, 'STOP');
  });
});
