// Amazon Bedrock behind the gateway (`adapter: bedrock`, Converse and ConverseStream), played by
// sluice-mock-upstream's Bedrock endpoints, which check every request's SigV4 signature with
// the same keys. Each caller protocol, streamed and not, is translated to Converse and back;
// the stream comes in AWS's binary event stream framing. A wrong key, Bedrock's throttling
// and an exception inside the stream each reach the caller in its own protocol. The official
// SDKs (OpenAI, Anthropic) are the callers where it matters.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import {
  GATEWAY_KEY,
  collectSse,
  jsonEvents,
  makeTempDir,
  removeTempDir,
  startMock,
  startSluice,
  usageRecord,
} from '../support/harness.mjs';
import { callerProtocols } from '../support/callers.mjs';

const ACCESS_KEY = 'AKIDSLUICETEST0001';
const SECRET_KEY = 'sluice/test/secret/key/0000000000000001';
const ADMIN_KEY = 'sk-sluice-bedrock-admin-key-000001';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

let mock;
let gw;
let dir;
let admin;

function bedrock(id, { secret = SECRET_KEY, headers = {}, api } = {}) {
  return {
    id,
    adapter: 'bedrock',
    base_url: mock.url,
    headers: { 'x-mock-count-key': id, ...headers },
    forward_headers: ['x-mock-*'],
    bedrock: { region: 'us-east-1', access_key_id: ACCESS_KEY, secret_access_key: secret, ...(api ? { api } : {}) },
  };
}

before(async () => {
  mock = await startMock({
    args: ['--aws-access-key-id', ACCESS_KEY, '--aws-secret-access-key', SECRET_KEY],
  });
  dir = makeTempDir('sluice-bedrock-');
  gw = await startSluice(
    {
      version: 1,
      listen: '127.0.0.1:0',
      server: { workers: 1, drain_timeout_ms: 3000 },
      admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
      store: { sqlite: path.join(dir, 'usage.db') },
      metering: { flush_interval_ms: 20 },
      providers: [
        bedrock('aws'),
        bedrock('aws_wrong_key', { secret: 'not/the/right/secret/key/000000000001' }),
        bedrock('aws_invoke', { api: 'invoke' }),
      ],
      routes: [
        { alias: 'claude', provider: 'aws', model: MODEL },
        { alias: 'claude-once', provider: 'aws', model: MODEL, retry: { per_target_attempts: 1 } },
        { alias: 'claude-invoke', provider: 'aws_invoke', model: MODEL, retry: { per_target_attempts: 1 } },
        { alias: 'claude-wrong-key', provider: 'aws_wrong_key', model: MODEL, retry: { per_target_attempts: 1 } },
        { alias: 'titan', kind: 'embeddings', provider: 'aws', model: 'amazon.titan-embed-text-v2:0' },
        { alias: 'titan-v1', kind: 'embeddings', provider: 'aws', model: 'amazon.titan-embed-text-v1' },
        { alias: 'cohere', kind: 'embeddings', provider: 'aws', model: 'us.cohere.embed-v4:0' },
      ],
      keys: [{ name: 'test', key: GATEWAY_KEY }],
    },
    { dir },
  );
  admin = `http://127.0.0.1:${gw.listening.admin_port}`;
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
  if (dir) removeTempDir(dir);
});

beforeEach(() => mock.reset());

const auth = { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' };
const post = (p, body, headers = {}) =>
  fetch(`${gw.url}${p}`, { method: 'POST', headers: { ...auth, ...headers }, body: JSON.stringify(body) });

const CALLERS = callerProtocols(post);

describe('every caller protocol to Bedrock Converse, signed', () => {
  for (const [protocol, caller] of Object.entries(CALLERS)) {
    for (const stream of [false, true]) {
      test(`${protocol}${stream ? ', streamed' : ''}`, async () => {
        const res = await caller.ask('claude', stream, { 'x-mock-events': '3' });
        if (!stream) {
          const body = await res.text();
          assert.equal(res.status, 200, body);
          assert.equal(caller.text(body), 'Mock reply w1 w2 w3');
        } else {
          assert.equal(res.status, 200);
          assert.match(res.headers.get('content-type'), /text\/event-stream/);
          const { events } = await collectSse(res);
          assert.equal(caller.streamed(events), 'Mock reply w1 w2 w3');
        }
        const stats = await mock.stats();
        const last = stats.last_request;
        assert.equal(last.target, `/model/${encodeURIComponent(MODEL)}/${stream ? 'converse-stream' : 'converse'}`);
        assert.match(last.headers.authorization, new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY}/\\d{8}/us-east-1/bedrock/aws4_request, `));
        assert.equal(stats.bedrock_signatures_valid, 1, 'the mock recomputed the signature');
        assert.ok(!JSON.stringify(last).includes(GATEWAY_KEY), 'the caller key never goes upstream');
        assert.ok(!JSON.stringify(last).includes(SECRET_KEY), 'the secret key is only ever a signature');
        const sent = JSON.parse(last.body);
        assert.deepEqual(sent.messages, [{ role: 'user', content: [{ text: 'hello' }] }]);
      });
    }
  }

  test('the usage record has the tokens Bedrock reported', async () => {
    const res = await CALLERS.chat.ask('claude', true, { 'x-mock-events': '4' });
    await collectSse(res);
    const record = await usageRecord(admin, ADMIN_KEY, res.headers.get('x-request-id'));
    assert.equal(record.provider, 'aws');
    assert.equal(record.outcome, 'complete');
    assert.ok(record.input_tokens > 0, JSON.stringify(record));
    assert.ok(record.output_tokens > 0, JSON.stringify(record));
  });
});

describe('tools through Converse', () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];

  for (const stream of [false, true]) {
    test(`an OpenAI SDK tool loop${stream ? ', streamed' : ''}`, async () => {
      const client = new OpenAI({ apiKey: GATEWAY_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const messages = [{ role: 'user', content: 'weather in Paris?' }];
      let call;
      if (!stream) {
        const first = await client.chat.completions.create({ model: 'claude', messages, tools, max_tokens: 64 });
        assert.equal(first.choices[0].finish_reason, 'tool_calls');
        call = first.choices[0].message.tool_calls[0];
      } else {
        const s = await client.chat.completions.create({ model: 'claude', messages, tools, max_tokens: 64, stream: true });
        const parts = { id: '', name: '', args: '' };
        let finish;
        for await (const chunk of s) {
          const d = chunk.choices[0]?.delta;
          for (const tc of d?.tool_calls ?? []) {
            parts.id ||= tc.id ?? '';
            parts.name ||= tc.function?.name ?? '';
            parts.args += tc.function?.arguments ?? '';
          }
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        assert.equal(finish, 'tool_calls');
        call = { id: parts.id, type: 'function', function: { name: parts.name, arguments: parts.args } };
      }
      assert.equal(call.function.name, 'get_weather');
      assert.ok(call.id);
      JSON.parse(call.function.arguments);
      const sentTools = JSON.parse((await mock.stats()).last_request.body).toolConfig.tools;
      assert.equal(sentTools[0].toolSpec.name, 'get_weather');

      // The second turn carries the call and its result back as toolUse / toolResult.
      messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      messages.push({ role: 'tool', tool_call_id: call.id, content: '18 C and sunny' });
      const second = await client.chat.completions.create({ model: 'claude', messages, max_tokens: 64, tools });
      assert.ok(second.choices[0].message.content.length > 0);
      const turn = JSON.parse((await mock.stats()).last_request.body).messages;
      assert.equal(turn[1].role, 'assistant');
      assert.equal(turn[1].content[0].toolUse.name, 'get_weather');
      assert.equal(turn[2].role, 'user');
      assert.equal(turn[2].content[0].toolResult.content[0].text, '18 C and sunny');
      assert.equal(turn[2].content[0].toolResult.toolUseId, turn[1].content[0].toolUse.toolUseId);
    });
  }
});

describe('Bedrock failures, in the caller\'s protocol', () => {
  test('a wrong secret key: the signature is refused, the caller gets a 502 naming the credentials', async () => {
    const res = await CALLERS.chat.ask('claude-wrong-key', false);
    const body = await res.json();
    assert.equal(res.status, 502);
    assert.equal(body.error.code, 'upstream_auth_failed');
    assert.match(body.error.message, /credentials/);
    assert.equal((await mock.stats()).bedrock_signatures_invalid, 1);
  });

  test('throttling is a 429 the Anthropic SDK sees as a RateLimitError', async () => {
    const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0, defaultHeaders: { 'x-mock-status': '429' } });
    await assert.rejects(
      client.messages.create({ model: 'claude-once', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }),
      (e) => e instanceof Anthropic.RateLimitError,
    );
  });

  test('an exception inside the stream ends it with the protocol\'s error event', async () => {
    const res = await CALLERS.anthropic.ask('claude-once', true, { 'x-mock-events': '6', 'x-mock-stream-error': '2:throttlingException' });
    assert.equal(res.status, 200);
    const { events } = await collectSse(res);
    const errors = jsonEvents(events).filter((e) => e.type === 'error');
    assert.equal(errors.length, 1, JSON.stringify(events.map((e) => e.event)));
    assert.ok(!events.some((e) => e.event === 'message_stop'));
  });

  test('the Anthropic SDK streams a Bedrock answer to the end', async () => {
    const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });
    const s = client.messages.stream({ model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    const final = await s.finalMessage();
    assert.match(final.content[0].text, /^Mock reply/);
    assert.equal(final.stop_reason, 'end_turn');
    assert.ok(final.usage.output_tokens > 0);
  });
});

describe('Claude through InvokeModel (bedrock.api: invoke)', () => {
  for (const stream of [false, true]) {
    test(`an Anthropic caller is passed through to ${stream ? 'invoke-with-response-stream' : 'invoke'}, signed`, async () => {
      const request = {
        model: 'claude-invoke',
        max_tokens: 64,
        stream,
        system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
        metadata: { user_id: 'u-1' },
        messages: [{ role: 'user', content: 'hello' }],
      };
      const res = await post('/v1/messages', request, { 'anthropic-version': '2023-06-01', 'x-mock-events': '3' });
      if (!stream) {
        const body = await res.text();
        assert.equal(res.status, 200, body);
        assert.equal(CALLERS.anthropic.text(body), 'Mock reply w1 w2 w3');
      } else {
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type'), /text\/event-stream/);
        const { events } = await collectSse(res);
        // The Messages API's own events, as Anthropic sends them: named, in order, to message_stop.
        const names = events.map((e) => e.event);
        assert.equal(names[0], 'message_start');
        assert.equal(names.at(-1), 'message_stop');
        for (const e of events) assert.equal(JSON.parse(e.data).type, e.event);
        assert.equal(CALLERS.anthropic.streamed(events), 'Mock reply w1 w2 w3');
      }
      const stats = await mock.stats();
      const last = stats.last_request;
      assert.equal(last.target, `/model/${encodeURIComponent(MODEL)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`);
      assert.equal(stats.bedrock_signatures_valid, 1, 'the Invoke body is what was signed');
      // The caller's members as written; no model, no stream; Bedrock's version.
      const { model, stream: _s, ...rest } = request;
      assert.deepEqual(JSON.parse(last.body), { anthropic_version: 'bedrock-2023-05-31', ...rest });
      assert.ok(model);
    });
  }

  test('an OpenAI caller is translated to the Messages body and back, streamed', async () => {
    const res = await CALLERS.chat.ask('claude-invoke', true, { 'x-mock-events': '2' });
    assert.equal(res.status, 200);
    const { events } = await collectSse(res);
    assert.equal(CALLERS.chat.streamed(events), 'Mock reply w1 w2');
    const sent = JSON.parse((await mock.stats()).last_request.body);
    assert.equal(sent.anthropic_version, 'bedrock-2023-05-31');
    assert.equal(sent.model, undefined);
    assert.equal(sent.stream, undefined);
  });

  test('the usage record has the tokens of the passed-through stream', async () => {
    const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });
    const { data: stream, response } = await client.messages
      .create({ model: 'claude-invoke', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    let input = 0;
    let output = 0;
    for await (const event of stream) {
      if (event.type === 'message_start') input = event.message.usage.input_tokens;
      if (event.type === 'message_delta') output = event.usage.output_tokens;
    }
    assert.ok(input > 0 && output > 0);
    const record = await usageRecord(admin, ADMIN_KEY, response.headers.get('x-request-id'));
    assert.equal(record.provider, 'aws_invoke');
    assert.equal(record.input_tokens, input);
    assert.equal(record.output_tokens, output);
    assert.equal(record.outcome, 'complete');
  });

  test('an exception inside the Invoke stream ends it with an Anthropic error event, never AWS bytes', async () => {
    const res = await CALLERS.anthropic.ask('claude-invoke', true, { 'x-mock-events': '6', 'x-mock-stream-error': '2:overloaded_error' });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(!text.includes(':message-type') && !text.includes(':exception-type'), text);
    const events = text.split('\n\n').filter(Boolean);
    const last = events.at(-1);
    assert.match(last, /^event: error\ndata: /);
    const error = JSON.parse(last.slice(last.indexOf('data: ') + 6));
    assert.equal(error.type, 'error');
    assert.ok(!text.includes('message_stop'));
  });
});

describe('embeddings through InvokeModel (Titan, Cohere), for OpenAI embeddings callers', () => {
  const client = () => new OpenAI({ apiKey: GATEWAY_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

  test('the OpenAI SDK (base64 by default) gets Titan v2 vectors, signed, metered from the answer', async () => {
    const { data: answer, response } = await client()
      .embeddings.create({ model: 'titan', input: 'the quick brown fox', dimensions: 256 })
      .withResponse();
    assert.equal(answer.object, 'list');
    assert.equal(answer.model, 'titan');
    assert.equal(answer.data.length, 1);
    assert.equal(answer.data[0].embedding.length, 256);
    assert.ok(Math.abs(norm(answer.data[0].embedding) - 1) < 1e-5, 'unit length, as Titan was asked');
    const stats = await mock.stats();
    const last = stats.last_request;
    assert.equal(last.target, `/model/${encodeURIComponent('amazon.titan-embed-text-v2:0')}/invoke`);
    assert.equal(stats.bedrock_signatures_valid, 1);
    assert.deepEqual(JSON.parse(last.body), { inputText: 'the quick brown fox', dimensions: 256, normalize: true });
    const tokens = Math.floor('the quick brown fox'.length / 4) + 1;
    assert.deepEqual(answer.usage, { prompt_tokens: tokens, total_tokens: tokens });
    const record = await usageRecord(admin, ADMIN_KEY, response.headers.get('x-request-id'));
    assert.equal(record.provider, 'aws');
    assert.equal(record.operation, 'embeddings');
    assert.equal(record.input_tokens, tokens);
    assert.equal(record.output_tokens, 0);
    assert.equal(record.outcome, 'complete');
  });

  test('float vectors carry the same values the base64 ones do', async () => {
    const asFloat = await post('/v1/embeddings', { model: 'titan', input: 'same text', encoding_format: 'float' });
    assert.equal(asFloat.status, 200);
    const floats = (await asFloat.json()).data[0].embedding;
    const viaSdk = await client().embeddings.create({ model: 'titan', input: 'same text' });
    assert.equal(floats.length, 1024, "Titan v2's default");
    assert.deepEqual(viaSdk.data[0].embedding, floats.map((x) => Math.fround(x)));
  });

  test('Cohere takes the batch in one call; its token count comes from the response header', async () => {
    const inputs = ['first document', 'second, longer document', 'third'];
    const { data: answer, response } = await client()
      .embeddings.create({ model: 'cohere', input: inputs, dimensions: 512 })
      .withResponse();
    assert.equal(answer.data.length, 3);
    assert.deepEqual(answer.data.map((d) => d.index), [0, 1, 2]);
    for (const d of answer.data) assert.equal(d.embedding.length, 512);
    assert.notDeepEqual(answer.data[0].embedding, answer.data[1].embedding, 'one vector per text, in order');
    const stats = await mock.stats();
    assert.equal(stats.requests_total, 1, 'one upstream call for the batch');
    assert.deepEqual(JSON.parse(stats.last_request.body), { texts: inputs, input_type: 'search_document', output_dimension: 512 });
    const tokens = inputs.reduce((n, t) => n + Math.floor(t.length / 4) + 1, 0);
    assert.equal(answer.usage.prompt_tokens, tokens);
    const record = await usageRecord(admin, ADMIN_KEY, response.headers.get('x-request-id'));
    assert.equal(record.input_tokens, tokens);
  });

  test("a caller's input_type reaches Cohere", async () => {
    const res = await post('/v1/embeddings', { model: 'cohere', input: 'what is a fox?', input_type: 'search_query' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(JSON.parse((await mock.stats()).last_request.body).input_type, 'search_query');
  });

  test('what the model cannot take is a 400 in OpenAI\'s shape, never an upstream call', async () => {
    const cases = [
      [{ model: 'titan', input: ['a', 'b'] }, 'input', 'too_many_inputs'],
      [{ model: 'titan-v1', input: 'a', dimensions: 256 }, 'dimensions', null],
      [{ model: 'titan', input: [1, 2, 3] }, 'input', 'translation_unsupported'],
      [{ model: 'cohere', input: Array.from({ length: 97 }, (_, i) => `t${i}`) }, 'input', 'too_many_inputs'],
    ];
    for (const [body, param, code] of cases) {
      const res = await post('/v1/embeddings', body);
      const text = await res.text();
      assert.equal(res.status, 400, text);
      const error = JSON.parse(text).error;
      assert.equal(error.param, param, text);
      if (code) assert.equal(error.code, code, text);
    }
    assert.equal((await mock.stats()).requests_total, 0);
  });

  test("Bedrock's own refusal is the caller's 400, not retried", async () => {
    // Titan v2 takes 256, 512 or 1024 dimensions only: the mock answers as Bedrock does.
    const res = await post('/v1/embeddings', { model: 'titan', input: 'a', dimensions: 300 });
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.match(JSON.parse(text).error.message, /dimensions/);
    assert.equal((await mock.stats()).requests_total, 1);
  });
});

describe('provider_options through Converse', () => {
  test("the bag's bedrock entries reach Converse, merged where the codec also writes", async () => {
    const res = await post('/v1/chat/completions', {
      model: 'claude',
      messages: [{ role: 'user', content: 'hello' }],
      provider_options: {
        bedrock: {
          guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '2' },
          additionalModelRequestFields: { top_k: 40 },
          requestMetadata: { team: 'search' },
        },
        anthropic: { top_k: 5 },
      },
    });
    assert.equal(res.status, 200, await res.text());
    const sent = JSON.parse((await mock.stats()).last_request.body);
    assert.deepEqual(sent.guardrailConfig, { guardrailIdentifier: 'gr-1', guardrailVersion: '2' });
    assert.equal(sent.additionalModelRequestFields.top_k, 40);
    assert.deepEqual(sent.requestMetadata, { team: 'search' });
    assert.equal(sent.provider_options, undefined);
    assert.equal(sent.top_k, undefined, "the anthropic entry is for Anthropic's API, not Converse");
    assert.equal((await mock.stats()).bedrock_signatures_valid, 1, 'signed over the body as sent');
  });
});
