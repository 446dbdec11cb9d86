// POST /v1/messages/count_tokens (Anthropic's token counting, which Claude Code calls): an
// Anthropic upstream counts with its own tokenizer (passthrough to /messages/count_tokens);
// towards any other upstream the gateway estimates and says so in `x-sluice-token-count`.
// Driven by the official @anthropic-ai/sdk (messages.countTokens).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';

import { GATEWAY_KEY, PROVIDER_KEY, gatewayConfig, postJson, useStack } from '../support/harness.mjs';

let gw;
let mock;

useStack(
  {
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl);
      cfg.providers.push({ id: 'claude', adapter: 'anthropic', base_url: m.baseUrl, api_key: PROVIDER_KEY });
      cfg.routes.push({ alias: 'claude-test', provider: 'claude', model: 'claude-sonnet-4-5' });
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

const client = () => new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });

// "hello world" (11 bytes) -> ceil(11 / 4) = 3, plus 4 for the one message.
const ESTIMATE_HELLO = 7;

describe('POST /v1/messages/count_tokens', () => {
  test('an Anthropic upstream counts: the caller bytes go to /messages/count_tokens with the model replaced', async () => {
    const { data, response } = await client()
      .messages.countTokens({
        model: 'claude-test',
        system: 'You are terse.',
        messages: [{ role: 'user', content: 'hello world' }],
      })
      .withResponse();
    // The mock counts (characters of system and messages) / 4 + 1: (14 + 11) / 4 + 1 = 7.
    assert.equal(data.input_tokens, 7);
    assert.equal(response.headers.get('x-sluice-token-count'), null);

    const { last_request: lr, requests_total: total } = await mock.stats();
    assert.equal(total, 1);
    assert.match(lr.target, /\/v1\/messages\/count_tokens$/);
    assert.equal(lr.headers['x-api-key'], PROVIDER_KEY);
    assert.equal(JSON.parse(lr.body).model, 'claude-sonnet-4-5');
    assert.ok(!JSON.stringify(lr).includes(GATEWAY_KEY));

    const entry = await gw.waitForLog((e) => e.path === '/v1/messages/count_tokens' && e.upstream);
    assert.equal(entry.status, 200);
    assert.equal(entry.upstream[0].passthrough, true);
  });

  test('any other upstream: the gateway estimates, says so, and calls no upstream', async () => {
    const { data, response } = await client()
      .messages.countTokens({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello world' }] })
      .withResponse();
    assert.equal(data.input_tokens, ESTIMATE_HELLO);
    assert.equal(response.headers.get('x-sluice-token-count'), 'estimate');
    assert.equal((await mock.stats()).requests_total, 0);

    const entry = await gw.waitForLog((e) => e.path === '/v1/messages/count_tokens' && e.alias === 'gpt-test');
    assert.equal(entry.status, 200);
    assert.equal(entry.attempts, 0);
    assert.equal(entry.usage, null);
  });

  test('the estimate counts tools, system and images', async () => {
    const base = { model: 'mock-chat', messages: [{ role: 'user', content: 'hello world' }] };
    const plain = await client().messages.countTokens(base);
    assert.equal(plain.input_tokens, ESTIMATE_HELLO);
    const withTool = await client().messages.countTokens({
      ...base,
      tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' } }],
    });
    assert.ok(withTool.input_tokens > plain.input_tokens + 8, JSON.stringify(withTool));
    const withImage = await client().messages.countTokens({
      model: 'mock-chat',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'text', text: 'hello world' },
          ],
        },
      ],
    });
    assert.equal(withImage.input_tokens, ESTIMATE_HELLO + 1600);
  });

  test('a bad body is a 400 in Anthropic shape, for both kinds of upstream', async () => {
    for (const model of ['claude-test', 'gpt-test']) {
      const r = await postJson(gw, '/v1/messages/count_tokens', { model }, { headers: { 'anthropic-version': '2023-06-01' } });
      assert.equal(r.status, 400);
      assert.equal(r.json.type, 'error');
      assert.equal(r.json.error.type, 'invalid_request_error');
      assert.match(r.json.error.message, /messages/);
    }
    // Content the estimate has to read is validated like a Messages request.
    const r = await postJson(
      gw,
      '/v1/messages/count_tokens',
      { model: 'gpt-test', messages: [{ role: 'wizard', content: 'x' }] },
      { headers: { 'anthropic-version': '2023-06-01' } },
    );
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /messages\.0\.role/);
    assert.equal((await mock.stats()).requests_total, 0);
  });

  test('max_tokens is not required, an unknown model is a 404', async () => {
    const r = await postJson(gw, '/v1/messages/count_tokens', { model: 'nope', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(r.status, 404);
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, 'not_found_error');
  });
});
