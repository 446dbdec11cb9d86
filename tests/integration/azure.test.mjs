// An Azure OpenAI upstream (`adapter: azure_openai`), played by sluice-mock-upstream: the route's
// model is the deployment in the URL, api-version is in the query, the key goes in `api-key`,
// and OpenAI callers are passed through (same wire protocol). Anthropic callers are translated.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import OpenAI from 'openai';

import { GATEWAY_KEY, PROVIDER_KEY, gatewayConfig, postJson, useStack } from '../support/harness.mjs';

let gw;
let mock;

useStack(
  {
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl);
      const resource = m.url + '/openai';
      cfg.providers.push(
        { id: 'azure', adapter: 'azure_openai', base_url: resource, api_key: PROVIDER_KEY, forward_headers: ['x-mock-*'] },
        { id: 'azure-v1', adapter: 'azure_openai', base_url: resource, api_key: PROVIDER_KEY, api_style: 'v1' },
      );
      cfg.routes.push(
        { alias: 'azure-chat', provider: 'azure', model: 'gpt-4o-deployment' },
        { alias: 'azure-embed', kind: 'embeddings', provider: 'azure', model: 'embed-deployment' },
        { alias: 'azure-v1', provider: 'azure-v1', model: 'gpt-4o-mini' },
      );
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

describe('Azure OpenAI upstream', () => {
  test('chat: deployment path, api-version, api-key; the OpenAI SDK gets the answer as is', async () => {
    const client = new OpenAI({ apiKey: GATEWAY_KEY, baseURL: gw.baseUrl, maxRetries: 0 });
    const r = await client.chat.completions.create({ model: 'azure-chat', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.object, 'chat.completion');
    assert.match(r.choices[0].message.content, /^Mock reply/);
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/openai/deployments/gpt-4o-deployment/chat/completions?api-version=2024-10-21');
    assert.equal(lr.headers['api-key'], PROVIDER_KEY);
    assert.equal(lr.headers.authorization, undefined);
    assert.ok(!JSON.stringify(lr).includes(GATEWAY_KEY));
  });

  test('streams and embeddings go to their deployment paths', async () => {
    const client = new OpenAI({ apiKey: GATEWAY_KEY, baseURL: gw.baseUrl, maxRetries: 0 });
    let text = '';
    for await (const chunk of await client.chat.completions.create({
      model: 'azure-chat',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    })) {
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.match(text, /^Mock reply/);
    const e = await client.embeddings.create({ model: 'azure-embed', input: 'x' });
    assert.equal(e.data.length, 1);
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/openai/deployments/embed-deployment/embeddings?api-version=2024-10-21');
  });

  test('the v1 API style posts to /openai/v1 with the model in the body', async () => {
    const r = await postJson(gw, '/v1/chat/completions', { model: 'azure-v1', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.status, 200, r.text);
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.target, '/openai/v1/chat/completions');
    assert.equal(JSON.parse(lr.body).model, 'gpt-4o-mini');
  });

  test('an Anthropic caller is translated, with max_completion_tokens for Azure', async () => {
    const r = await postJson(gw, '/v1/messages', { model: 'azure-chat', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.type, 'message');
    const { last_request: lr } = await mock.stats();
    const sent = JSON.parse(lr.body);
    assert.equal(sent.max_completion_tokens, 20);
    assert.equal(sent.max_tokens, undefined);
  });

  test('a content-filter refusal keeps its code and is not marked retryable', async () => {
    const filtered = JSON.stringify({
      error: { message: 'The response was filtered', type: null, param: 'prompt', code: 'content_filter', status: 400 },
    });
    const r = await postJson(gw, '/v1/chat/completions', { model: 'azure-chat', messages: [{ role: 'user', content: 'x' }] }, {
      headers: { 'x-mock-status': '400', 'x-mock-raw-body': filtered },
    });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'content_filter');
    assert.equal(r.headers.get('x-should-retry'), 'false');
  });
});
