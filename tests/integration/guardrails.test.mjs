// Input guardrails through the real binary against sluice-mock-upstream: PII redacted before
// egress in every caller protocol's text fields (system, user, tool results, tool arguments),
// passthrough and translated, as the upstream received it (the mock's last request); a blocked
// request refused in the caller's protocol with nothing sent upstream and the secret never
// echoed; the cache keyed on the redacted text; the verdict in the header and the access log,
// never the text.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';

import { writeFileSync } from 'node:fs';
import path from 'node:path';

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import { GATEWAY_KEY, PROVIDER_KEY, makeTempDir, removeTempDir, runBinary, sluiceBin, startMock, startSluice, usageRecord, waitFor } from '../support/harness.mjs';

let mock;
let gw;

const SECRET = 'sk-proj-Zq8vN3kLm2Xc9Rt5Yw1Bp7Hd4Fg6Js0A';
const CARD = '4111 1111 1111 1111';
const ADMIN_KEY = 'sk-sluice-guardrails-admin-key-01';
const CONTRACTOR_KEY = 'sk-sluice-test-key-contractor-01';
const PLACEHOLDER_ARGS = JSON.stringify({ to: '[EMAIL_1]', cc: '[EMAIL_2]' });

function config() {
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 1, drain_timeout_ms: 3000 },
    admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
    store: { sqlite: path.join(storeDir, 'usage.db') },
    metering: { flush_interval_ms: 20 },
    guardrails: {
      apply: ['network'],
      key_groups: { contractors: ['no-ssn'] },
      policies: [
        { name: 'network', detectors: [{ builtin: 'ipv4', action: 'flag' }] },
        {
          name: 'pii',
          detectors: [
            { builtin: 'pii', action: 'redact' },
            { keywords: ['project falcon'], name: 'codename', case_insensitive: true, action: 'redact' },
          ],
        },
        { name: 'secrets', detectors: [{ builtin: 'secrets', action: 'block' }] },
        { name: 'strict', block_status: 446, uninspected: 'block', detectors: [{ builtin: 'us_ssn', action: 'block' }] },
        { name: 'no-cards-out', direction: 'output', hold_back_chars: 48, detectors: [{ builtin: 'payment_card', action: 'block' }, { builtin: 'email', action: 'flag' }] },
        { name: 'emails-out', direction: 'output', detectors: [{ builtin: 'email', action: 'flag' }] },
        // Holds far more text than a short answer has, but never longer than 100 ms.
        { name: 'timed-out', direction: 'output', hold_back_chars: 10000, hold_back_ms: 100, detectors: [{ builtin: 'email', action: 'flag' }] },
        { name: 'no-ssn', detectors: [{ builtin: 'us_ssn', action: 'block' }] },
        { name: 'health', detectors: [{ keywords: ['diagnosis', 'prescription'], name: 'medical', case_insensitive: true, action: 'flag' }] },
        { name: 'pseudo', detectors: [{ builtin: 'email', action: 'pseudonymise' }, { builtin: 'payment_card', action: 'redact' }] },
      ],
    },
    providers: [
      { id: 'up', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-count-key': 'up' } },
      { id: 'claude', adapter: 'anthropic', base_url: mock.url, api_key: PROVIDER_KEY, headers: { 'x-mock-count-key': 'claude' } },
      {
        id: 'leaky',
        adapter: 'openai',
        base_url: mock.baseUrl,
        api_key: PROVIDER_KEY,
        // A tool call whose arguments hold a card number, streamed in three paced fragments.
        headers: { 'x-mock-tool-arguments': JSON.stringify({ note: `pay with ${CARD} now` }), 'x-mock-pace-ms': '20' },
      },
      {
        id: 'chatty',
        adapter: 'openai',
        base_url: mock.baseUrl,
        api_key: PROVIDER_KEY,
        headers: { 'x-mock-tool-arguments': JSON.stringify({ note: 'write to ops@example.com today' }) },
      },
      { id: 'paced', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-pace-ms': '80', 'x-mock-events': '10' } },
      // Three words, then nothing: the connection stays open until the gateway leaves it.
      { id: 'stalling', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-stall-after': '3', 'x-mock-events': '10' } },
      { id: 'zero-retention', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-count-key': 'zdr' } },
      { id: 'zero-retention-down', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-count-key': 'zdr-down', 'x-mock-status': '503' } },
      // The model answers with the placeholders it was sent; the mock cuts [EMAIL_1] over two
      // stream fragments.
      { id: 'placeholders', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-tool-arguments': PLACEHOLDER_ARGS } },
      { id: 'placeholders-claude', adapter: 'anthropic', base_url: mock.url, api_key: PROVIDER_KEY, headers: { 'x-mock-tool-arguments': PLACEHOLDER_ARGS } },
    ],
    routes: [
      { alias: 'redacted', provider: 'up', model: 'mock-model', guardrails: ['pii', 'secrets'] },
      { alias: 'redacted-claude', provider: 'claude', model: 'claude-x', guardrails: ['pii', 'secrets'] },
      { alias: 'embed', kind: 'embeddings', provider: 'up', model: 'mock-embed', guardrails: ['pii'] },
      { alias: 'strict', provider: 'up', model: 'mock-model', guardrails: ['strict'] },
      { alias: 'cached', provider: 'up', model: 'mock-model', guardrails: ['pii'], cache: true },
      { alias: 'open', provider: 'up', model: 'mock-model' },
      { alias: 'checked', provider: 'leaky', model: 'mock-model', guardrails: ['no-cards-out'] },
      { alias: 'checked-cached', provider: 'leaky', model: 'mock-model', guardrails: ['no-cards-out'], cache: true },
      { alias: 'flagged', provider: 'chatty', model: 'mock-model', guardrails: ['emails-out'] },
      { alias: 'timed', provider: 'paced', model: 'mock-model', guardrails: ['timed-out'] },
      { alias: 'untimed', provider: 'paced', model: 'mock-model', guardrails: ['emails-out', 'timed-out'] },
      { alias: 'timed-stall', provider: 'stalling', model: 'mock-model', guardrails: ['timed-out'] },
      { alias: 'timed-stall-quiet', provider: 'stalling', model: 'mock-model', guardrails: ['timed-out'], heartbeat_ms: 0 },
      {
        alias: 'medical',
        guardrails: ['health'],
        policy: {
          conditional: {
            rules: [{ when: { guardrails: 'health' }, then: { fallback: { targets: [{ provider: 'zero-retention', model: 'm' }, { provider: 'zero-retention', model: 'm2' }] } } }],
            default: { provider: 'up', model: 'mock-model' },
          },
        },
      },
      {
        alias: 'medical-strict',
        guardrails: ['health'],
        policy: {
          conditional: {
            rules: [{ when: { guardrails: 'health/medical' }, then: { provider: 'zero-retention-down', model: 'm' } }],
            default: { provider: 'up', model: 'mock-model' },
          },
        },
      },
      { alias: 'pseudo', provider: 'placeholders', model: 'mock-model', guardrails: ['pseudo'] },
      { alias: 'pseudo-claude', provider: 'placeholders-claude', model: 'claude-x', guardrails: ['pseudo'] },
      { alias: 'pseudo-cached', provider: 'placeholders', model: 'mock-model', guardrails: ['pseudo'], cache: true },
    ],
    keys: [
      { name: 'a', key: GATEWAY_KEY },
      { name: 'contractor', group: 'contractors', key: CONTRACTOR_KEY },
    ],
  };
}

const storeDir = makeTempDir('sluice-guardrails-store-');
before(async () => {
  mock = await startMock();
  gw = await startSluice(config());
});
after(async () => {
  await gw?.stop();
  await mock?.stop();
  removeTempDir(storeDir);
});
const recordOf = (res) => usageRecord(`http://127.0.0.1:${gw.listening.admin_port}`, ADMIN_KEY, res.headers.get('x-request-id'));
beforeEach(async () => {
  await mock.reset();
});

const auth = { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' };
const post = (p, body, headers = {}) =>
  fetch(`${gw.url}${p}`, { method: 'POST', headers: { ...auth, ...headers }, body: JSON.stringify(body) });
const upstreamBody = async () => (await mock.stats()).last_request?.body ?? '';
const upstreamCalls = async () => (await mock.stats()).requests_total ?? 0;

const PII = {
  email: 'jane.roe@example.org',
  card: '4111 1111 1111 1111',
  phone: '+44 20 7946 0958',
  iban: 'DE89 3704 0044 0532 0130 00',
};

function assertRedacted(body, where) {
  for (const [what, value] of Object.entries(PII)) {
    assert.ok(!body.includes(value), `${where}: the ${what} reached the upstream: ${body}`);
  }
  assert.ok(!body.toLowerCase().includes('project falcon'), `${where}: the codename reached the upstream`);
  assert.ok(body.includes('[EMAIL_1]'), `${where}: ${body}`);
}

describe('redaction before egress', () => {
  test('OpenAI chat passthrough: system, user, tool arguments and tool results', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'redacted',
      messages: [
        { role: 'system', content: `Escalate to ${PII.email} about Project Falcon.` },
        { role: 'user', content: `My card is ${PII.card}, call me on ${PII.phone}` },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'pay', arguments: JSON.stringify({ iban: PII.iban, mail: PII.email }) } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: `paid from ${PII.iban}` },
      ],
      tools: [{ type: 'function', function: { name: 'pay', parameters: { type: 'object', properties: {} } } }],
    });
    assert.equal(res.status, 200, await res.clone().text());
    const header = res.headers.get('x-sluice-guardrails');
    assert.match(header, /pii\/email:redact=2/);
    assert.match(header, /pii\/payment_card:redact=1/);
    assert.match(header, /pii\/codename:redact=1/);
    await res.json();
    const body = await upstreamBody();
    assertRedacted(body, 'openai');
    const sent = JSON.parse(body);
    assert.equal(sent.messages[0].content, 'Escalate to [EMAIL_1] about [CODENAME_1].');
    assert.deepEqual(JSON.parse(sent.messages[2].tool_calls[0].function.arguments), { iban: '[IBAN_1]', mail: '[EMAIL_1]' });
    assert.equal(sent.messages[3].content, 'paid from [IBAN_1]');
    assert.equal(sent.messages[3].tool_call_id, 'call_1', 'ids untouched');
  });

  test('Anthropic Messages translated to an OpenAI upstream, and passthrough to Anthropic', async () => {
    const message = (model) => ({
      model,
      max_tokens: 64,
      system: [{ type: 'text', text: `Owner: ${PII.email}` }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: `card ${PII.card} phone ${PII.phone} project falcon` }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'pay', input: { iban: PII.iban } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: `sent to ${PII.email}` }] },
      ],
    });
    const headers = { 'anthropic-version': '2023-06-01' };
    for (const model of ['redacted', 'redacted-claude']) {
      const res = await post('/v1/messages', message(model), headers);
      assert.equal(res.status, 200, await res.clone().text());
      assert.match(res.headers.get('x-sluice-guardrails'), /pii\/iban:redact=1/);
      await res.json();
      assertRedacted(await upstreamBody(), model);
    }
  });

  test('Gemini generateContent, stream and not', async () => {
    const body = {
      systemInstruction: { parts: [{ text: `Contact ${PII.email}` }] },
      contents: [{ role: 'user', parts: [{ text: `${PII.card} / ${PII.phone} / ${PII.iban} / Project Falcon` }] }],
    };
    for (const p of ['/v1beta/models/redacted:generateContent', '/v1beta/models/redacted:streamGenerateContent?alt=sse']) {
      const res = await post(p, body);
      assert.equal(res.status, 200, await res.clone().text());
      await res.text();
      assertRedacted(await upstreamBody(), p);
    }
  });

  test('embeddings inputs', async () => {
    const res = await post('/v1/embeddings', { model: 'embed', input: [`about ${PII.email}`, 'nothing here'] });
    assert.equal(res.status, 200, await res.clone().text());
    await res.json();
    const sent = JSON.parse(await upstreamBody());
    assert.deepEqual(sent.input, ['about [EMAIL_1]', 'nothing here']);
  });

  test('the cache keys the redacted text: another address, the same entry', async () => {
    const ask = (email) => post('/v1/chat/completions', { model: 'cached', messages: [{ role: 'user', content: `Summarise the mail from ${email}` }] });
    const first = await ask('ann@one.example');
    assert.equal(first.headers.get('x-sluice-cache'), 'miss');
    await first.json();
    const second = await ask('bob@two.example');
    assert.equal(second.headers.get('x-sluice-cache'), 'hit', 'the model saw the same text');
    await second.json();
    assert.equal(await upstreamCalls(), 1);
  });
});

describe('blocking', () => {
  test('a secret is refused in each protocol, named by policy and detector, never echoed; nothing goes upstream', async () => {
    const cases = [
      ['/v1/chat/completions', { model: 'redacted', messages: [{ role: 'user', content: `use ${SECRET}` }] }, {}],
      ['/v1/messages', { model: 'redacted', max_tokens: 16, messages: [{ role: 'user', content: `use ${SECRET}` }] }, { 'anthropic-version': '2023-06-01' }],
      ['/v1beta/models/redacted:generateContent', { contents: [{ parts: [{ text: `use ${SECRET}` }] }] }, {}],
      ['/v1/chat/completions', { model: 'redacted-claude', stream: true, messages: [{ role: 'user', content: `use ${SECRET}` }] }, {}],
    ];
    for (const [p, body, headers] of cases) {
      const res = await post(p, body, headers);
      const text = await res.text();
      assert.equal(res.status, 400, `${p}: ${text}`);
      assert.ok(!text.includes(SECRET), `${p} echoed the secret`);
      assert.match(text, /guardrail policy \\?"secrets\\?"/, text);
      assert.match(text, /openai_key/);
      const error = JSON.parse(text);
      if (p.startsWith('/v1/messages')) {
        assert.equal(error.type, 'error');
        assert.equal(error.error.type, 'invalid_request_error');
      } else if (p.startsWith('/v1beta')) {
        assert.equal(error.error.code, 400);
      } else {
        assert.equal(error.error.code, 'guardrail_blocked');
      }
    }
    assert.equal(await upstreamCalls(), 0);
  });

  test("a policy's own status, and content it cannot inspect refused where it says so", async () => {
    const ssn = await post('/v1/chat/completions', { model: 'strict', messages: [{ role: 'user', content: 'SSN 123-45-6789' }] });
    assert.equal(ssn.status, 446);
    assert.ok(!(await ssn.text()).includes('123-45-6789'));
    const image = await post('/v1/chat/completions', {
      model: 'strict',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }],
    });
    assert.equal(image.status, 446);
    assert.match(await image.text(), /cannot inspect/);
    assert.equal(await upstreamCalls(), 0);
  });
});

describe('flags and logs', () => {
  test('the config-wide policy flags every route; the access log has the verdict, not the text', async () => {
    const res = await post('/v1/chat/completions', { model: 'open', messages: [{ role: 'user', content: 'ping 10.20.30.40 please' }] });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-sluice-guardrails'), 'network/ipv4:flag=1');
    await res.json();
    assert.ok((await upstreamBody()).includes('10.20.30.40'), 'a flag sends the text as it is');
    const line = await gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));
    assert.equal(line.guardrails, 'network/ipv4:flag=1');
    assert.ok(!JSON.stringify(line).includes('10.20.30.40'));
    const clean = await post('/v1/chat/completions', { model: 'open', messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(clean.headers.get('x-sluice-guardrails'), null);
    await clean.json();
  });

  test('a pattern RE2 refuses fails the config with its place in the file', async () => {
    const bad = config();
    bad.guardrails.policies.push({ name: 'broken', detectors: [{ regex: '(unclosed', name: 'x' }] });
    await assert.rejects(startSluice(bad), /guardrail policy "broken".*regex "x"/s);
  });
});

describe('output checks', () => {
  const tools = [{ type: 'function', function: { name: 'pay', parameters: { type: 'object', properties: { note: { type: 'string' } } } } }];
  const ask = (model, extra = {}) =>
    post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'pay the bill' }], tools, tool_choice: 'required', ...extra });

  test('a complete answer that holds a card is refused; the usage is still logged', async () => {
    const res = await ask('checked');
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.ok(!text.includes('4111'), text);
    const error = JSON.parse(text).error;
    assert.equal(error.code, 'guardrail_blocked');
    assert.match(error.message, /answer was blocked by guardrail policy "no-cards-out": it contains "payment_card"/);
    const line = await gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));
    assert.equal(line.guardrails, 'out:no-cards-out/payment_card:block=1');
    assert.equal(line.error_code, 'guardrail_blocked');
    assert.ok(line.usage?.input_tokens > 0, 'the generation was paid: its usage is kept');
    const record = await recordOf(res);
    assert.equal(record.guardrails, 'out:no-cards-out/payment_card:block=1');
    assert.ok(record.input_tokens > 0 && record.outcome === 'upstream_error', JSON.stringify(record));
  });

  test('a stream ends with the error event before any byte of the card, in each protocol', async () => {
    const chat = await ask('checked', { stream: true, stream_options: { include_usage: true } });
    assert.equal(chat.status, 200);
    const events = await chat.text();
    assert.ok(!events.includes('4111'), events);
    assert.ok(!events.includes('[DONE]'), 'the stream did not end as a success');
    const last = events.trim().split('\n\n').pop();
    assert.match(last, /"code":"guardrail_blocked"/, last);
    const line = await gw.waitForLog((e) => e.request_id === chat.headers.get('x-request-id'));
    assert.equal(line.outcome, 'midstream_error');
    assert.match(line.guardrails, /out:no-cards-out\/payment_card:block=1/);

    const anthropic = await post(
      '/v1/messages',
      {
        model: 'checked',
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'pay the bill' }],
        tools: [{ name: 'pay', input_schema: { type: 'object', properties: { note: { type: 'string' } } } }],
        tool_choice: { type: 'any' },
      },
      { 'anthropic-version': '2023-06-01' },
    );
    const told = await anthropic.text();
    assert.ok(!told.includes('4111'), told);
    assert.match(told, /event: error\ndata: \{"type":"error"/);
    assert.ok(!told.includes('message_stop'));
  });

  test('a clean stream goes through whole', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'checked',
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const events = await res.text();
    const text = events
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.content ?? '')
      .join('');
    assert.match(text, /^Mock reply w1 w2 w3 w4 w5 w6 w7 w8$/);
    assert.ok(events.trim().endsWith('data: [DONE]'));
  });

  test('a flag lets the stream through and counts a match split over fragments once', async () => {
    const res = await ask('flagged', { stream: true });
    const events = await res.text();
    const args = events
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '')
      .join('');
    assert.match(args, /ops@example\.com/, 'a flag does not change the answer');
    assert.ok(events.trim().endsWith('data: [DONE]'));
    const line = await gw.waitForLog((e) => e.request_id === res.headers.get('x-request-id'));
    assert.equal(line.guardrails, 'out:emails-out/email:flag=1');
    assert.equal(line.outcome, 'complete');
  });

  test('metrics count findings by policy, detector, action and direction', async () => {
    await (await ask('checked')).text();
    const admin = `http://127.0.0.1:${gw.listening.admin_port}`;
    const res = await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const text = await res.text();
    const series = (labels) => Number((text.match(new RegExp(`sluice_guardrail_findings_total\\{${labels}\\} (\\d+)`)) ?? [])[1] ?? 'NaN');
    assert.ok(series('alias="checked",policy="no-cards-out",detector="payment_card",action="block",direction="output"') >= 1, text);
    assert.ok(series('alias="redacted",policy="pii",detector="email",action="redact",direction="input"') >= 1, text);
    assert.ok(!text.includes('4111'), 'no text in a label');
  });

  test('a blocked answer is never cached', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await ask('checked-cached');
      assert.equal(res.status, 400);
      await res.text();
    }
    assert.equal(await upstreamCalls(), 2, 'the second request went upstream again');
  });
});

describe('a time bound on the hold-back (hold_back_ms)', () => {
  // When (ms after the request) the first content and the stream's end reached the caller.
  async function timings(model) {
    const started = Date.now();
    const res = await post('/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200);
    const decoder = new TextDecoder();
    let text = '';
    let firstContent = -1;
    for await (const chunk of res.body) {
      text += decoder.decode(chunk, { stream: true });
      if (firstContent < 0 && /"content":"[^"]/.test(text)) firstContent = Date.now() - started;
    }
    const content = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '')
      .join('');
    return { firstContent, done: Date.now() - started, content, text };
  }

  test('text held longer than the bound goes out while the stream runs, whole and in order', async () => {
    const timed = await timings('timed');
    assert.match(timed.content, /^Mock reply w1 w2 w3 w4 w5 w6 w7 w8 w9 w10$/, timed.text);
    assert.match(timed.text, /\[DONE\]/);
    // 10 events 80 ms apart: without the bound all 10,000 characters of hold-back would keep
    // everything to the end.
    assert.ok(timed.done - timed.firstContent > 300, `first content at ${timed.firstContent} ms, end at ${timed.done} ms`);
  });

  for (const model of ['timed-stall', 'timed-stall-quiet']) {
    test(`held text goes out when its time is up though the upstream sends nothing more (${model})`, async () => {
      // The upstream stalls after three words and never ends: without a clock of its own the
      // guard would hold them until the next event, which never comes. The caller leaves once
      // it has them; the upstream call is then cut.
      const abortedBefore = (await mock.stats()).streams_aborted ?? 0;
      const controller = new AbortController();
      const giveUp = setTimeout(() => controller.abort(), 5000);
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: auth,
        signal: controller.signal,
        body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 200);
      const decoder = new TextDecoder();
      let text = '';
      const content = () =>
        text
          .split('\n')
          .filter((l) => l.startsWith('data: {'))
          .map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '')
          .join('');
      try {
        for await (const chunk of res.body) {
          text += decoder.decode(chunk, { stream: true });
          if (/w2/.test(content())) break;
        }
      } catch (e) {
        assert.fail(`the held words never came (${e.name}): ${text}`);
      } finally {
        clearTimeout(giveUp);
        controller.abort();
      }
      assert.match(content(), /^Mock reply w1 w2/);
      await waitFor(async () => ((await mock.stats()).streams_aborted ?? 0) > abortedBefore, {
        timeoutMs: 5000,
        message: 'the stalled upstream call to be cut',
      });
    });
  }

  test('the bound applies only when every output policy of the stream sets one', async () => {
    // emails-out has no time bound: its 64 characters hold the whole short answer to the end.
    const untimed = await timings('untimed');
    assert.match(untimed.content, /^Mock reply w1/);
    assert.ok(untimed.done - untimed.firstContent < 300, `first content at ${untimed.firstContent} ms, end at ${untimed.done} ms`);
  });
});

describe('pseudonymise', () => {
  const tools = [{ type: 'function', function: { name: 'mail', parameters: { type: 'object', properties: { to: { type: 'string' }, cc: { type: 'string' } } } } }];
  const people = (a, b) => `mail ${a} and copy ${b}; card 4111 1111 1111 1111`;
  const ask = (model, text, extra = {}) =>
    post('/v1/chat/completions', { model, messages: [{ role: 'user', content: text }], tools, tool_choice: 'required', ...extra });
  const argumentsOf = (events) =>
    events
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '')
      .join('');

  test('the upstream sees placeholders; the caller gets the values back, whole and streamed', async () => {
    const res = await ask('pseudo', people('ann@corp.example', 'bob@mail.example'));
    assert.equal(res.status, 200);
    const body = await res.json();
    const upstream = await upstreamBody();
    assert.ok(!upstream.includes('ann@corp.example') && !upstream.includes('bob@mail.example'), upstream);
    assert.match(upstream, /mail \[EMAIL_1\] and copy \[EMAIL_2\]; card \[CARD_1\]/);
    assert.deepEqual(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments), { to: 'ann@corp.example', cc: 'bob@mail.example' });
    assert.equal(res.headers.get('x-sluice-guardrails'), 'pseudo/email:pseudonymise=2,pseudo/payment_card:redact=1');
    const record = await recordOf(res);
    assert.equal(record.guardrails, 'pseudo/email:pseudonymise=2,pseudo/payment_card:redact=1');
    assert.ok(!JSON.stringify(record).includes('ann@corp'), 'no value in the record');

    const stream = await ask('pseudo', people('ann@corp.example', 'bob@mail.example'), { stream: true });
    const events = await stream.text();
    assert.ok(!events.includes('[EMAIL'), events);
    assert.deepEqual(JSON.parse(argumentsOf(events)), { to: 'ann@corp.example', cc: 'bob@mail.example' });
    assert.ok(events.trim().endsWith('data: [DONE]'));
  });

  test('an Anthropic stream gets its partial_json restored', async () => {
    const res = await post(
      '/v1/messages',
      {
        model: 'pseudo-claude',
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: people('ann@corp.example', 'bob@mail.example') }],
        tools: [{ name: 'mail', input_schema: { type: 'object', properties: { to: { type: 'string' } } } }],
        tool_choice: { type: 'any' },
      },
      { 'anthropic-version': '2023-06-01' },
    );
    const events = await res.text();
    assert.ok(!events.includes('[EMAIL'), events);
    const json = events
      .split('\n\n')
      .map((e) => e.split('\n').find((l) => l.startsWith('data: ')))
      .filter(Boolean)
      .map((l) => JSON.parse(l.slice(6)))
      .filter((d) => d.delta?.type === 'input_json_delta')
      .map((d) => d.delta.partial_json)
      .join('');
    assert.deepEqual(JSON.parse(json), { to: 'ann@corp.example', cc: 'bob@mail.example' });
  });

  test('a cached answer is restored with each caller\'s own values, never another\'s', async () => {
    const first = await ask('pseudo-cached', people('ann@corp.example', 'bob@mail.example'));
    assert.equal(first.headers.get('x-sluice-cache'), 'miss');
    assert.match((await first.json()).choices[0].message.tool_calls[0].function.arguments, /ann@corp\.example/);
    for (const stream of [false, true]) {
      const res = await ask('pseudo-cached', people('carl@x.example', 'dora@y.example'), stream ? { stream: true } : {});
      assert.equal(res.headers.get('x-sluice-cache'), 'hit', `stream=${stream}: the same question after pseudonymisation`);
      const text = await res.text();
      assert.ok(!text.includes('ann@') && !text.includes('bob@') && !text.includes('[EMAIL'), text);
      const args = stream ? argumentsOf(text) : JSON.parse(text).choices[0].message.tool_calls[0].function.arguments;
      assert.deepEqual(JSON.parse(args), { to: 'carl@x.example', cc: 'dora@y.example' });
    }
    assert.equal(await upstreamCalls(), 1);
  });
});

describe('sluice guardrails test', () => {
  const dir = makeTempDir('sluice-guardrails-');
  after(() => removeTempDir(dir));
  const file = path.join(dir, 'sluice.yaml');
  writeFileSync(
    file,
    `version: 1
auth: none
guardrails:
  policies:
    - name: pii
      detectors: [{ builtin: pii, action: redact }]
    - name: secrets
      detectors: [{ builtin: secrets, action: block }]
providers: [{ id: m, adapter: mock }]
routes: [{ alias: chat, provider: m, model: m }]
`,
  );

  test('shows the verdict and the text as it would be sent, never for a policy it lacks', async () => {
    const r = await runBinary(sluiceBin, ['guardrails', 'test', file, '--policy', 'pii', '--text', 'mail jane@example.org, card 4111 1111 1111 1111']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.blocked, false);
    assert.equal(out.sent, 'mail [EMAIL_1], card [CARD_1]');
    assert.deepEqual(out.finds.map((f) => `${f.detector}:${f.action}=${f.count}`), ['email:redact=1', 'payment_card:redact=1']);

    const blocked = await runBinary(sluiceBin, ['guardrails', 'test', file, '--policy', 'pii', '--policy', 'secrets', '--text', `key ${SECRET}`]);
    assert.equal(blocked.code, 0, blocked.stderr);
    const verdict = JSON.parse(blocked.stdout);
    assert.equal(verdict.blocked, true);
    assert.deepEqual(verdict.blocked_by, { policy: 'secrets', detector: 'openai_key' });
    assert.ok(!blocked.stdout.includes(SECRET), 'the matched text is not echoed');

    const unknown = await runBinary(sluiceBin, ['guardrails', 'test', file, '--policy', 'nope', '--text', 'x']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no policy named "nope"/);
  });
});

describe('routing on a verdict', () => {
  const calls = async (key) => (await mock.stats()).requests_by_header?.[key] ?? 0;
  const chat = (model, content) => post('/v1/chat/completions', { model, messages: [{ role: 'user', content }] });

  test('health data goes to the zero-retention target, the rest to the default', async () => {
    const plain = await chat('medical', 'summarise this meeting');
    assert.equal(plain.status, 200);
    await plain.text();
    const health = await chat('medical', 'explain this Diagnosis to me');
    assert.equal(health.status, 200);
    await health.text();
    assert.equal(health.headers.get('x-sluice-guardrails'), 'health/medical:flag=1');
    assert.equal(await calls('up'), 1);
    assert.equal(await calls('zdr'), 1);
  });

  test('when the zero-retention target fails, the request is refused, never sent elsewhere', async () => {
    const res = await chat('medical-strict', 'a prescription for my mother');
    const text = await res.text();
    assert.equal(res.status, 503, text);
    assert.ok((await calls('zdr-down')) >= 1);
    assert.equal(await calls('up'), 0, 'the default branch is not a fallback');
  });
});

describe('policies of a key group', () => {
  test("a group's policies add to the route's for its keys only", async () => {
    const body = { model: 'open', messages: [{ role: 'user', content: 'my SSN is 123-45-6789, from 10.1.2.3' }] };
    const staff = await post('/v1/chat/completions', body);
    assert.equal(staff.status, 200);
    await staff.text();
    assert.equal(staff.headers.get('x-sluice-guardrails'), 'network/ipv4:flag=1');

    const contractor = await post('/v1/chat/completions', body, { authorization: `Bearer ${CONTRACTOR_KEY}` });
    const text = await contractor.text();
    assert.equal(contractor.status, 400, text);
    assert.match(JSON.parse(text).error.message, /guardrail policy "no-ssn": it contains "us_ssn"/);
    assert.ok(!text.includes('123-45-6789'));
    assert.equal(await upstreamCalls(), 1, "the contractor's request went nowhere");
  });
});

describe('official SDKs on a blocked stream', () => {
  test('the OpenAI SDK raises its APIError, having yielded no byte of the card', async () => {
    const client = new OpenAI({ apiKey: GATEWAY_KEY, baseURL: gw.baseUrl, maxRetries: 0, timeout: 15000 });
    const stream = await client.chat.completions.create({
      model: 'checked',
      stream: true,
      messages: [{ role: 'user', content: 'pay the bill' }],
      tools: [{ type: 'function', function: { name: 'pay', parameters: { type: 'object', properties: { note: { type: 'string' } } } } }],
      tool_choice: 'required',
    });
    let seen = '';
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) seen += JSON.stringify(chunk);
      })(),
      (e) => e instanceof OpenAI.APIError && /guardrail policy "no-cards-out"/.test(e.message),
    );
    assert.ok(!seen.includes('4111'), seen);
  });

  test('the Anthropic SDK raises its APIError, having yielded no byte of the card', async () => {
    const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0, timeout: 15000 });
    const stream = client.messages.stream({
      model: 'checked',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'pay the bill' }],
      tools: [{ name: 'pay', input_schema: { type: 'object', properties: { note: { type: 'string' } } } }],
      tool_choice: { type: 'any' },
    });
    let seen = '';
    await assert.rejects(
      (async () => {
        for await (const event of stream) seen += JSON.stringify(event);
      })(),
      (e) => e instanceof Anthropic.APIError && /guardrail policy \\?"no-cards-out/.test(e.message),
    );
    assert.ok(!seen.includes('4111'), seen);
  });
});

describe('output checks in Responses and Gemini streams', () => {
  test('a Responses stream ends with its error event before the card', async () => {
    const res = await post('/v1/responses', {
      model: 'checked',
      stream: true,
      input: 'pay the bill',
      tools: [{ type: 'function', name: 'pay', parameters: { type: 'object', properties: { note: { type: 'string' } } } }],
      tool_choice: 'required',
    });
    const events = await res.text();
    assert.equal(res.status, 200);
    assert.ok(!events.includes('4111'), events);
    assert.match(events, /event: error\ndata: \{"type":"error","code":"guardrail_blocked"/);
    assert.ok(!events.includes('response.completed'));
  });

  test('a Gemini stream ends with its error object before the card', async () => {
    const res = await post('/v1beta/models/checked:streamGenerateContent?alt=sse', {
      contents: [{ role: 'user', parts: [{ text: 'pay the bill' }] }],
      tools: [{ functionDeclarations: [{ name: 'pay', parameters: { type: 'object', properties: { note: { type: 'string' } } } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
    });
    const events = await res.text();
    assert.equal(res.status, 200);
    assert.ok(!events.includes('4111'), events);
    assert.match(events, /"error":\{[^}]*guardrail policy \\"no-cards-out\\"/);
  });
});
