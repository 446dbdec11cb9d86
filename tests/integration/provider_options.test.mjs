// provider_options (docs/protocols.md, "Provider options"): provider-specific parameters a
// caller of any protocol sends in one bag, keyed by upstream family. Each upstream gets its own
// family's entries set in its body, translated or passed through, and never the bag itself;
// what is not allowed is a 400 in the caller's protocol before any upstream is called; two
// requests that differ only in the bag are different cache entries.

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
      const cfg = gatewayConfig(m.baseUrl, { cache: { memory_bytes: '4MiB', ttl_ms: 60000 } });
      cfg.providers.push(
        { id: 'claude', adapter: 'anthropic', base_url: m.baseUrl, api_key: PROVIDER_KEY },
        { id: 'gem', adapter: 'gemini', base_url: m.baseUrl, api_key: PROVIDER_KEY },
      );
      cfg.routes.push(
        { alias: 'claude', provider: 'claude', model: 'claude-sonnet-4-5' },
        { alias: 'gem', provider: 'gem', model: 'gemini-2.5-flash' },
        { alias: 'gpt-cached', provider: 'up', model: 'mock-model', cache: true },
      );
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

const BAG = {
  openai: { seed: 7, logit_bias: { 50256: -100 } },
  anthropic: { top_k: 5, metadata: { user_id: 'u-1' } },
  gemini: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }], generationConfig: { seed: 11 } },
  bedrock: { guardrailConfig: { guardrailIdentifier: 'g-1', guardrailVersion: '1' } },
};

const openai = () => new OpenAI({ apiKey: GATEWAY_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const sent = async () => JSON.parse((await mock.stats()).last_request.body);
const ask = (model, extra = {}) =>
  openai().chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 32, provider_options: BAG, ...extra });

describe('each upstream gets its own family, never the bag', () => {
  test('OpenAI SDK caller to Anthropic (translated)', async () => {
    await ask('claude');
    const body = await sent();
    assert.equal(body.top_k, 5);
    assert.deepEqual(body.metadata, { user_id: 'u-1' });
    assert.equal(body.provider_options, undefined);
    assert.equal(body.seed, undefined, "another family's entries stay at the gateway");
    assert.equal(body.guardrailConfig, undefined);
  });

  test('OpenAI SDK caller to Gemini (translated): generationConfig merged with what the codec wrote', async () => {
    await ask('gem', { temperature: 0.5 });
    const body = await sent();
    assert.deepEqual(body.safetySettings, BAG.gemini.safetySettings);
    assert.equal(body.generationConfig.seed, 11);
    assert.equal(body.generationConfig.temperature, 0.5, "the codec's own members stay");
    assert.equal(body.provider_options, undefined);
    assert.equal(body.providerOptions, undefined);
  });

  test('OpenAI SDK caller to OpenAI (passthrough): the bag comes out, its openai entries go in', async () => {
    await ask('gpt-test');
    const body = await sent();
    assert.equal(body.seed, 7);
    assert.deepEqual(body.logit_bias, { 50256: -100 });
    assert.equal(body.provider_options, undefined);
    assert.equal(body.top_k, undefined);
    assert.equal(body.model, 'mock-model');
  });

  test('Anthropic SDK caller to OpenAI (translated)', async () => {
    const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });
    await client.messages.create({ model: 'gpt-test', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }], provider_options: BAG });
    const body = await sent();
    assert.equal(body.seed, 7);
    assert.equal(body.provider_options, undefined);
    assert.equal(body.top_k, undefined);
  });
});

describe('what is not allowed', () => {
  for (const [what, bag, param] of [
    ['an unknown family', { antropic: { top_k: 1 } }, 'provider_options.antropic'],
    ["a member that keeps prompts at the provider", { openai: { store: true } }, 'provider_options.openai.store'],
    ["another tenant's cached content", { gemini: { cachedContent: 'cachedContents/abc' } }, 'provider_options.gemini.cachedContent'],
    ['a value of the wrong type', { anthropic: { top_k: 'five' } }, 'provider_options.anthropic.top_k'],
  ]) {
    for (const model of ['claude', 'gpt-test']) {
      test(`${what} is a 400 naming it, before any upstream call (${model === 'claude' ? 'translated' : 'passthrough'})`, async () => {
        await assert.rejects(
          ask(model, { provider_options: bag }),
          (e) => e.status === 400 && e.param === param && e.code === 'invalid_provider_options',
        );
        assert.equal((await mock.stats()).requests_total, 0);
      });
    }
  }

  test('an Anthropic caller gets the 400 in Anthropic shape', async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], provider_options: { openai: { store: true } } }),
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /provider_options\.openai\.store/);
  });
});

test('two requests that differ only in the bag are different cache entries', async () => {
  const question = { model: 'gpt-cached', messages: [{ role: 'user', content: 'cache me' }] };
  const post = (bag) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...question, provider_options: bag }),
    });
  const first = await post({ openai: { seed: 1 } });
  assert.equal(first.headers.get('x-sluice-cache'), 'miss');
  await first.text();
  const same = await post({ openai: { seed: 1 } });
  await same.text();
  assert.equal(same.headers.get('x-sluice-cache'), 'hit');
  const other = await post({ openai: { seed: 2 } });
  await other.text();
  assert.equal(other.headers.get('x-sluice-cache'), 'miss', 'another seed is another answer');
  assert.equal(JSON.parse((await mock.stats()).last_request.body).seed, 2);
});
