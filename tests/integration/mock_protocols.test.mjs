// The built-in `mock` provider answering in each wire protocol (`mock: { protocol: ... }`): a
// caller of the same protocol is passed through, any other caller is translated, exactly as with
// a real provider of that protocol, and the usage the caller sees is the mock's own figures.
// The mock's answer is "Hello from the Sluice mock provider. You said: <last user text>", with
// input tokens = prompt bytes / 4 + 1 and output tokens = words in the answer.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import {
  GATEWAY_KEY,
  gatewayConfig,
  makeTempDir,
  postJson,
  removeTempDir,
  runBinary,
  sluiceBin,
  toYaml,
  useStack,
} from '../support/harness.mjs';

let gw;

const PROTOCOLS = ['openai_chat', 'anthropic_messages', 'gemini', 'openai_responses'];
const ANSWER = 'Hello from the Sluice mock provider. You said: ping';
// "ping" is 4 prompt bytes -> 4 / 4 + 1 = 2 input tokens; the answer has 9 words.
const INPUT_TOKENS = 2;
const OUTPUT_TOKENS = 9;

useStack(
  {
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl);
      for (const protocol of PROTOCOLS) {
        cfg.providers.push({ id: `mock-${protocol}`, adapter: 'mock', mock: { protocol } });
        cfg.routes.push({ alias: `m-${protocol}`, provider: `mock-${protocol}`, model: `mock-${protocol}-model` });
      }
      return cfg;
    },
  },
  (s) => ({ gw } = s),
);

describe('built-in mock provider in every protocol', () => {
  for (const protocol of PROTOCOLS) {
    test(`OpenAI chat caller -> mock speaking ${protocol}: text and usage`, async () => {
      const client = new OpenAI({ apiKey: GATEWAY_KEY, baseURL: gw.baseUrl, maxRetries: 0 });
      const r = await client.chat.completions.create({
        model: `m-${protocol}`,
        messages: [{ role: 'user', content: 'ping' }],
      });
      assert.equal(r.choices[0].message.content, ANSWER);
      assert.equal(r.choices[0].finish_reason, 'stop');
      assert.equal(r.usage.prompt_tokens, INPUT_TOKENS);
      assert.equal(r.usage.completion_tokens, OUTPUT_TOKENS);

      let text = '';
      let usage;
      for await (const chunk of await client.chat.completions.create({
        model: `m-${protocol}`,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'ping' }],
      })) {
        text += chunk.choices[0]?.delta?.content ?? '';
        usage = chunk.usage ?? usage;
      }
      assert.equal(text, ANSWER);
      assert.equal(usage.prompt_tokens, INPUT_TOKENS);
      assert.equal(usage.completion_tokens, OUTPUT_TOKENS);
    });

    test(`Anthropic caller -> mock speaking ${protocol}: text and usage`, async () => {
      const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });
      const m = await client.messages.create({
        model: `m-${protocol}`,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'ping' }],
      });
      assert.equal(m.content[0].text, ANSWER);
      assert.equal(m.stop_reason, 'end_turn');
      assert.equal(m.usage.input_tokens, INPUT_TOKENS);
      assert.equal(m.usage.output_tokens, OUTPUT_TOKENS);

      const stream = client.messages.stream({
        model: `m-${protocol}`,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'ping' }],
      });
      const final = await stream.finalMessage();
      assert.equal(final.content[0].text, ANSWER);
      assert.equal(final.usage.input_tokens, INPUT_TOKENS);
      assert.equal(final.usage.output_tokens, OUTPUT_TOKENS);
    });
  }

  test('a caller of the mock protocol is passed through (no translation)', async () => {
    const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });
    await client.messages.create({
      model: 'm-anthropic_messages',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'ping' }],
    });
    const entry = await gw.waitForLog((e) => e.api === 'anthropic' && e.upstream?.[0]?.provider === 'mock-anthropic_messages');
    assert.equal(entry.upstream[0].passthrough, true);
    assert.equal(entry.usage.input_tokens, INPUT_TOKENS);
    assert.equal(entry.usage.output_tokens, OUTPUT_TOKENS);
  });

  test('Gemini caller -> mock speaking gemini: passthrough, stream included', async () => {
    const res = await postJson(gw, '/v1beta/models/m-gemini:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'ping' }] }],
    }, { headers: { 'x-goog-api-key': GATEWAY_KEY } });
    assert.equal(res.status, 200);
    const body = res.json;
    assert.equal(body.candidates[0].content.parts[0].text, ANSWER);
    assert.equal(body.usageMetadata.promptTokenCount, INPUT_TOKENS);
    assert.equal(body.usageMetadata.candidatesTokenCount, OUTPUT_TOKENS);

    const s = await postJson(gw, '/v1beta/models/m-gemini:streamGenerateContent?alt=sse', {
      contents: [{ role: 'user', parts: [{ text: 'ping' }] }],
    }, { headers: { 'x-goog-api-key': GATEWAY_KEY } });
    assert.equal(s.status, 200);
    const events = s.text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    const text = events.map((e) => e.candidates?.[0]?.content?.parts?.map((p) => p.text ?? '').join('') ?? '').join('');
    assert.equal(text, ANSWER);
    assert.equal(events.at(-1).usageMetadata.candidatesTokenCount, OUTPUT_TOKENS);
  });

  test('an unknown mock protocol is a config error naming the choices', async () => {
    const cfg = gatewayConfig('http://127.0.0.1:9/v1');
    cfg.providers.push({ id: 'bad', adapter: 'mock', mock: { protocol: 'smoke_signals' } });
    const dir = makeTempDir();
    try {
      const file = path.join(dir, 'bad.yaml');
      writeFileSync(file, toYaml(cfg));
      const r = await runBinary(sluiceBin, ['check-config', file]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /mock\.protocol/);
      assert.match(r.stderr, /anthropic_messages/);
    } finally {
      removeTempDir(dir);
    }
  });
});
