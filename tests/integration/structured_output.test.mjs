// Structured output across protocols: an OpenAI SDK caller asking for JSON (chat
// `response_format`, Responses `text.format`) reaches Anthropic and Gemini upstreams with the
// same schema in their own fields (Anthropic `output_config.format`, Gemini `responseMimeType` +
// `responseJsonSchema`), asserted on the body sluice-mock-upstream received. The built-in mock
// provider answering in those protocols reads the translated body with its protocol's decoder.
// Then strict mode (`server.strict_fields`): a translated request carrying a field the target
// cannot take is a 400 in the caller's shape naming the field; passthrough is untouched.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import { GATEWAY_KEY, PROVIDER_KEY, gatewayConfig, useStack } from '../support/harness.mjs';

let gw;
let mock;

useStack(
  {
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl, { server: { strict_fields: true } });
      cfg.providers.push(
        { id: 'claude', adapter: 'anthropic', base_url: m.baseUrl, api_key: PROVIDER_KEY },
        { id: 'gem', adapter: 'gemini', base_url: `${m.url}/v1beta`, api_key: PROVIDER_KEY },
        { id: 'mock-anthropic', adapter: 'mock', mock: { protocol: 'anthropic_messages' } },
        { id: 'mock-gemini', adapter: 'mock', mock: { protocol: 'gemini' } },
      );
      cfg.routes.push(
        { alias: 'claude-test', provider: 'claude', model: 'claude-sonnet-4-5' },
        { alias: 'gemini-test', provider: 'gem', model: 'gemini-2.5-flash' },
        { alias: 'm-anthropic', provider: 'mock-anthropic', model: 'mock-a' },
        { alias: 'm-gemini', provider: 'mock-gemini', model: 'mock-g' },
      );
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

const openai = () => new OpenAI({ apiKey: GATEWAY_KEY, baseURL: gw.baseUrl, maxRetries: 0 });

const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, temp: { type: ['number', 'null'] } },
  required: ['city', 'temp'],
  additionalProperties: false,
};

async function upstreamBody() {
  const { last_request: lr } = await mock.stats();
  return JSON.parse(lr.body);
}

// What each upstream protocol must have received for the schema.
const EXPECT = {
  'claude-test': (sent) => {
    assert.deepEqual(sent.output_config, { format: { type: 'json_schema', schema: SCHEMA } });
  },
  'gemini-test': (sent) => {
    assert.equal(sent.generationConfig.responseMimeType, 'application/json');
    assert.deepEqual(sent.generationConfig.responseJsonSchema, SCHEMA);
  },
};

describe('structured output through translation', () => {
  for (const alias of Object.keys(EXPECT)) {
    test(`chat.completions response_format json_schema -> ${alias}`, async () => {
      const r = await openai().chat.completions.create({
        model: alias,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'weather', strict: true, schema: SCHEMA },
        },
      });
      assert.equal(r.choices[0].finish_reason, 'stop');
      EXPECT[alias](await upstreamBody());
    });

    test(`responses.create text.format json_schema -> ${alias}`, async () => {
      const r = await openai().responses.create({
        model: alias,
        input: 'Weather in Paris?',
        text: { format: { type: 'json_schema', name: 'weather', strict: true, schema: SCHEMA } },
      });
      assert.equal(r.status, 'completed');
      EXPECT[alias](await upstreamBody());
    });
  }

  test('json_object: Gemini gets the JSON mime type, Anthropic one system instruction', async () => {
    await openai().chat.completions.create({
      model: 'gemini-test',
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_object' },
    });
    const gemini = await upstreamBody();
    assert.deepEqual(gemini.generationConfig, { responseMimeType: 'application/json' });

    await openai().chat.completions.create({
      model: 'claude-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      response_format: { type: 'json_object' },
    });
    const claude = await upstreamBody();
    assert.equal(claude.output_config, undefined);
    assert.deepEqual(claude.system, [
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Respond with a single JSON object and nothing else.' },
    ]);
  });

  for (const alias of ['m-anthropic', 'm-gemini']) {
    test(`the built-in mock speaking ${alias.slice(2)} accepts the translated schema`, async () => {
      const chat = await openai().chat.completions.create({
        model: alias,
        messages: [{ role: 'user', content: 'ping' }],
        response_format: { type: 'json_schema', json_schema: { name: 'w', schema: SCHEMA } },
      });
      assert.match(chat.choices[0].message.content, /You said: ping/);
      const resp = await openai().responses.create({
        model: alias,
        input: 'ping',
        text: { format: { type: 'json_schema', name: 'w', schema: SCHEMA } },
      });
      assert.match(resp.output_text, /You said: ping/);
    });
  }

  test('a malformed response_format is a 400 in OpenAI shape with the param path', async () => {
    await assert.rejects(
      openai().chat.completions.create({
        model: 'claude-test',
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema', json_schema: { schema: SCHEMA } },
      }),
      (e) => e.status === 400 && e.param === 'response_format.json_schema.name',
    );
    assert.equal((await mock.stats()).requests_total, 0, 'nothing reached the upstream');
  });
});

describe('strict mode (server.strict_fields)', () => {
  test('OpenAI chat caller, translated: an ignored field is a 400 naming it', async () => {
    await assert.rejects(
      openai().chat.completions.create({
        model: 'claude-test',
        messages: [{ role: 'user', content: 'hi' }],
        seed: 7,
      }),
      (e) =>
        e.status === 400 &&
        e.param === 'seed' &&
        e.code === 'unsupported_parameter' &&
        /Unsupported parameter: 'seed'/.test(e.message),
    );
    assert.equal((await mock.stats()).requests_total, 0);
  });

  test('n > 1 and logprobs are refused in translation, strict or not', async () => {
    for (const extra of [{ n: 2 }, { logprobs: true }]) {
      await assert.rejects(
        openai().chat.completions.create({
          model: 'gemini-test',
          messages: [{ role: 'user', content: 'hi' }],
          ...extra,
        }),
        (e) => e.status === 400 && e.param === Object.keys(extra)[0],
      );
    }
  });

  test('passthrough is never affected: the field reaches an upstream of the same protocol', async () => {
    const r = await openai().chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      seed: 7,
      logit_bias: { 50256: -100 },
    });
    assert.equal(r.object, 'chat.completion');
    const sent = await upstreamBody();
    assert.equal(sent.seed, 7);
    assert.deepEqual(sent.logit_bias, { 50256: -100 });
  });

  test('Anthropic caller, translated: a beta field is a 400 in Anthropic shape', async () => {
    const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });
    await assert.rejects(
      client.messages.create({
        model: 'gemini-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
        context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      }),
      (e) =>
        e.status === 400 &&
        e.error?.error?.type === 'invalid_request_error' &&
        /context_management: Extra inputs are not permitted/.test(e.error?.error?.message),
    );
  });

  test('Gemini caller, translated: safetySettings is a 400 in Gemini shape', async () => {
    const res = await fetch(`${gw.url}/v1beta/models/claude-test:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': GATEWAY_KEY },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }],
      }),
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
    assert.match(body.error.message, /safety_settings: 'safetySettings' cannot be translated/);
  });

  test('a structured-output request carries nothing strict mode rejects', async () => {
    const r = await openai().responses.create({
      model: 'gemini-test',
      input: 'hi',
      text: { format: { type: 'json_object' } },
    });
    assert.equal(r.status, 'completed');
  });
});
