// loadbalance strategy prefix_affinity against three mock providers that each keep a prompt
// cache (x-mock-prompt-cache: a request's cached_tokens are its longest message prefix that
// provider has seen): the turns of one conversation keep landing on the provider that holds
// its prefix, where weighted balancing scatters them; a provider that fails moves only its own
// conversations. The only fake is the upstream.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { GATEWAY_KEY, PROVIDER_KEY, startMock, startSluice } from '../support/harness.mjs';

let mock;
let gw;
const run = `${process.pid}-${Date.now()}`;

const provider = (id, headers = {}) => ({
  id,
  adapter: 'openai',
  base_url: mock.baseUrl,
  api_key: PROVIDER_KEY,
  headers: { 'x-mock-prompt-cache': `${run}-${id}`, 'x-mock-count-key': `${run}-${id}`, ...headers },
});

const targets = (model) => ['p1', 'p2', 'p3'].map((provider) => ({ provider, model }));

before(async () => {
  mock = await startMock();
  gw = await startSluice({
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 2 },
    providers: [provider('p1'), provider('p2'), provider('p3'), provider('down', { 'x-mock-status': '503' })],
    routes: [
      { alias: 'affine', policy: { loadbalance: { strategy: 'prefix_affinity', targets: targets('m') } } },
      { alias: 'weighted', policy: { loadbalance: { strategy: 'weighted', targets: targets('m') } } },
      {
        alias: 'affine-failing',
        policy: {
          loadbalance: {
            strategy: 'prefix_affinity',
            targets: [{ provider: 'down', model: 'm' }, { provider: 'p1', model: 'm' }, { provider: 'p2', model: 'm' }],
          },
        },
        retry: { per_target_attempts: 1 },
      },
    ],
    keys: [{ name: 'test', key: GATEWAY_KEY }],
  });
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
});

async function ask(model, messages) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 32, messages }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

// `conversations` agents, each a system prompt of its own and `turns` turns; the share of
// later turns (the first can never hit) that read the whole previous prompt from the chosen
// provider's cache (only the provider that served the previous turn holds it).
async function converse(model, conversations, turns) {
  let later = 0;
  let hits = 0;
  await Promise.all(
    Array.from({ length: conversations }, async (_, c) => {
      const messages = [{ role: 'system', content: `You are agent ${c} of run ${run}. ${'Rules. '.repeat(50)}` }];
      let previous = 0;
      for (let t = 0; t < turns; t++) {
        messages.push({ role: 'user', content: `turn ${t} of conversation ${c}: ${'tool output '.repeat(30)}` });
        const body = await ask(model, messages);
        if (t > 0) {
          later += 1;
          if (body.usage.prompt_tokens_details.cached_tokens >= previous) hits += 1;
        }
        previous = body.usage.prompt_tokens;
        messages.push({ role: 'assistant', content: body.choices[0].message.content });
      }
    }),
  );
  return hits / later;
}

describe('prefix_affinity', () => {
  test("a conversation's turns keep meeting the provider cache that holds their prefix", async (t) => {
    const affine = await converse('affine', 12, 5);
    const weighted = await converse('weighted', 12, 5);
    t.diagnostic(`cache-read share: prefix_affinity ${affine}, weighted ${weighted}`);
    assert.ok(affine >= 0.95, `prefix_affinity cache-read share ${affine}`);
    assert.ok(weighted < 0.8, `weighted cache-read share ${weighted}`);
  });

  test('a failing target moves only the conversations it held', async () => {
    // Every conversation whose first choice is `down` fails over to its next choice, and
    // keeps meeting that provider's cache from then on.
    const share = await converse('affine-failing', 9, 4);
    assert.ok(share >= 0.95, `cache-read share with a failing target ${share}`);
  });
});
