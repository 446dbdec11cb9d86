// sluice-mock-upstream's Bedrock Runtime endpoints on their own (Converse, ConverseStream), the
// fake the gateway's Bedrock tests stand on: answers in the recorded shapes, the binary event
// stream with both CRC-32s of every message right, Bedrock's error shape, and the SigV4 check,
// against a SigV4 signer written here with node:crypto (independent of src/aws, which the mock
// and the gateway share): a good signature, a session token, a bearer API key pass; a wrong
// secret, a body changed after signing, an unknown key, a skewed date, no Authorization are
// refused as AWS refuses them. The tests run in order: the last counts them all.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { startMock } from '../support/harness.mjs';

const KEY_ID = 'AKIDMOCKEXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const REGION = 'us-east-1';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1%3A0';

let mock;

before(async () => {
  mock = await startMock({
    fixtures: null,
    args: ['--aws-access-key-id', KEY_ID, '--aws-secret-access-key', SECRET, '--aws-bearer-token', 'bedrock-api-key-mock'],
  });
});

after(async () => {
  await mock?.stop();
});

describe('the mock as Bedrock', () => {
const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();
// RFC 3986 encoding of each path segment, applied to the already-encoded path (SigV4 encodes
// twice for every service but S3).
const encodePath = (path) => path.split('/').map((s) => encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())).join('/');

function sign({ path, body, date = new Date(), keyId = KEY_ID, secret = SECRET, token }) {
  const amzDate = date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers = { 'content-type': 'application/json', host: `127.0.0.1:${mock.port}`, 'x-amz-date': amzDate };
  if (token) headers['x-amz-security-token'] = token;
  const names = Object.keys(headers).sort();
  const canonical = ['POST', encodePath(path), '', ...names.map((n) => `${n}:${headers[n]}`), '',
                     names.join(';'), sha256(body)].join('\n');
  const scope = `${day}/${REGION}/bedrock/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac('AWS4' + secret, day);
  for (const part of [REGION, 'bedrock', 'aws4_request']) key = hmac(key, part);
  const signature = crypto.createHmac('sha256', key).update(toSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${keyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  delete headers.host;  // fetch sets it, to the same value
  return headers;
}

async function post(operation, payload, { extra = {}, ...options } = {}) {
  const path = `/model/${MODEL}/${operation}`;
  const body = JSON.stringify(payload);
  const headers = { ...sign({ path, body, ...options }), ...extra };
  return fetch(mock.url + path, { method: 'POST', headers, body });
}

// application/vnd.amazon.eventstream: total length, headers length, prelude CRC, headers,
// payload, message CRC (all CRCs are CRC-32 over everything before them).
function crc32(buf) {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xEDB88320 & -(c & 1));
  }
  return ~c >>> 0;
}
function decodeEventStream(buf) {
  const messages = [];
  for (let at = 0; at < buf.length;) {
    const total = buf.readUInt32BE(at);
    const headersLength = buf.readUInt32BE(at + 4);
    assert.equal(buf.readUInt32BE(at + 8), crc32(buf.subarray(at, at + 8)), 'prelude CRC');
    assert.equal(buf.readUInt32BE(at + total - 4), crc32(buf.subarray(at, at + total - 4)), 'message CRC');
    const headers = {};
    for (let h = at + 12; h < at + 12 + headersLength;) {
      const nameLength = buf[h];
      const name = buf.toString('utf8', h + 1, h + 1 + nameLength);
      h += 1 + nameLength;
      assert.equal(buf[h], 7, 'string header');
      const valueLength = buf.readUInt16BE(h + 1);
      headers[name] = buf.toString('utf8', h + 3, h + 3 + valueLength);
      h += 3 + valueLength;
    }
    const payload = JSON.parse(buf.toString('utf8', at + 12 + headersLength, at + total - 4));
    messages.push({ headers, payload });
    at += total;
  }
  return messages;
}

const conversation = { messages: [{ role: 'user', content: [{ text: 'Hello there' }] }],
                       inferenceConfig: { maxTokens: 64 } };
const tools = { toolConfig: { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: {} } } }] } };
test('converse text', async () => {
  const res = await post('converse', conversation, { extra: { 'x-mock-events': '3' } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('x-amzn-requestid'), /^[0-9a-f-]{36}$/);
  const body = await res.json();
  assert.deepEqual(body.output, { message: { content: [{ text: 'Mock reply w1 w2 w3' }], role: 'assistant' } });
  assert.equal(body.stopReason, 'end_turn');
  assert.deepEqual(body.usage, { inputTokens: 3, outputTokens: 5, totalTokens: 8 });
  assert.equal(typeof body.metrics.latencyMs, 'number');
});

test('converse tool use', async () => {
  const res = await post('converse', { ...conversation, ...tools });
  const body = await res.json();
  assert.equal(body.stopReason, 'tool_use');
  assert.deepEqual(body.output.message.content[0].toolUse,
                   { input: { mock: true }, name: 'get_weather', toolUseId: 'tooluse_mock_1', type: 'tool_use' });
});

test('converse-stream text: CRCs, order, padding', async () => {
  const res = await post('converse-stream', conversation, { extra: { 'x-mock-events': '4' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/vnd.amazon.eventstream');
  const messages = decodeEventStream(Buffer.from(await res.arrayBuffer()));
  assert.deepEqual(messages.map((m) => m.headers[':event-type']),
                   ['messageStart', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockDelta',
                    'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata']);
  for (const m of messages) {
    assert.equal(m.headers[':message-type'], 'event');
    assert.equal(m.headers[':content-type'], 'application/json');
    assert.match(m.payload.p, /^[a-zA-Z0-9]+$/);
  }
  const text = messages.filter((m) => m.payload.delta).map((m) => m.payload.delta.text).join('');
  assert.equal(text, 'Mock reply w1 w2 w3 w4');
  assert.equal(messages[6].payload.stopReason, 'end_turn');
  assert.deepEqual(messages[7].payload.usage, { inputTokens: 3, outputTokens: 6, totalTokens: 9 });
});

test('converse-stream tool use', async () => {
  const res = await post('converse-stream', { ...conversation, ...tools },
                         { extra: { 'x-mock-tool-arguments': '{"city":"Paris"}' } });
  const messages = decodeEventStream(Buffer.from(await res.arrayBuffer()));
  assert.deepEqual(messages[1].payload.start, { toolUse: { name: 'get_weather', toolUseId: 'tooluse_mock_1' } });
  const input = messages.filter((m) => m.payload.delta).map((m) => m.payload.delta.toolUse.input).join('');
  assert.equal(input, '{"city":"Paris"}');
  assert.equal(messages.at(-2).payload.stopReason, 'tool_use');
});

test('converse-stream x-mock-stream-error', async () => {
  const res = await post('converse-stream', conversation,
                         { extra: { 'x-mock-events': '4', 'x-mock-stream-error': '1:throttlingException' } });
  const messages = decodeEventStream(Buffer.from(await res.arrayBuffer()));
  assert.equal(messages.length, 3);
  assert.deepEqual(messages[2].headers, { ':exception-type': 'throttlingException', ':content-type': 'application/json',
                                          ':message-type': 'exception' });
  assert.equal(typeof messages[2].payload.message, 'string');
});

const invokeBody = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 64,
                     messages: [{ role: 'user', content: 'Hello there' }] };
test('invoke: the Messages API answer for the path\'s model', async () => {
  const res = await post('invoke', invokeBody, { extra: { 'x-mock-events': '2' } });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.type, 'message');
  assert.equal(body.model, decodeURIComponent(MODEL));
  assert.equal(body.content[0].text, 'Mock reply w1 w2');
});

test('invoke-with-response-stream: each Messages event in a chunk, base64', async () => {
  const res = await post('invoke-with-response-stream', invokeBody, { extra: { 'x-mock-events': '3' } });
  assert.equal(res.headers.get('content-type'), 'application/vnd.amazon.eventstream');
  const messages = decodeEventStream(Buffer.from(await res.arrayBuffer()));
  for (const m of messages) assert.equal(m.headers[':event-type'], 'chunk');
  const events = messages.map((m) => JSON.parse(Buffer.from(m.payload.bytes, 'base64').toString('utf8')));
  assert.equal(events[0].type, 'message_start');
  assert.equal(events.at(-1).type, 'message_stop');
  const text = events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('');
  assert.equal(text, 'Mock reply w1 w2 w3');
});

test('invoke refuses the Anthropic API\'s own body: model, stream, no version', async () => {
  for (const body of [{ ...invokeBody, model: 'x' }, { ...invokeBody, stream: true },
                      { ...invokeBody, anthropic_version: undefined }]) {
    const res = await post('invoke', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(res.headers.get('x-amzn-errortype'), /^ValidationException:/);
  }
});

test('validation error: maxTokens 0', async () => {
  const res = await post('converse', { ...conversation, inferenceConfig: { maxTokens: 0 } });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get('x-amzn-errortype'), 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/');
  assert.match((await res.json()).message, /inferenceConfig.maxTokens/);
});

test('x-mock-status 429 in Bedrock shape', async () => {
  const res = await post('converse', conversation, { extra: { 'x-mock-status': '429' } });
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('x-amzn-errortype'), 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/');
  assert.deepEqual(await res.json(), { message: 'mock injected status 429' });
});

test('session token, signed', async () => {
  const res = await post('converse', conversation, { token: 'FQoGZXIvYXdzEXAMPLE' });
  assert.equal(res.status, 200);
});

const rejected = async (res, type, pattern) => {
  assert.equal(res.status, 403);
  assert.equal(res.headers.get('x-amzn-errortype'), type);
  assert.match((await res.json()).message, pattern);
};
test('bad signature: 403 InvalidSignatureException', async () => {
  const res = await post('converse', conversation, { secret: 'not-the-secret' });
  await rejected(res, 'InvalidSignatureException', /^The request signature we calculated does not match/);
});
test('body changed after signing: 403', async () => {
  const path = `/model/${MODEL}/converse`;
  const headers = sign({ path, body: JSON.stringify(conversation) });
  const res = await fetch(mock.url + path, { method: 'POST', headers, body: JSON.stringify({ ...conversation, x: 1 }) });
  await rejected(res, 'InvalidSignatureException', /does not match/);
});
test('unknown key id: 403 UnrecognizedClientException', async () => {
  const res = await post('converse', conversation, { keyId: 'AKIDOTHER' });
  await rejected(res, 'UnrecognizedClientException', /security token included in the request is invalid/);
});
test('date 20 minutes old: 403 Signature expired', async () => {
  const res = await post('converse', conversation, { date: new Date(Date.now() - 20 * 60 * 1000) });
  await rejected(res, 'InvalidSignatureException', /^Signature expired: \d{8}T\d{6}Z is now earlier than/);
});
test('no Authorization: 403 MissingAuthenticationTokenException', async () => {
  const res = await fetch(`${mock.url}/model/${MODEL}/converse`, { method: 'POST', body: JSON.stringify(conversation) });
  await rejected(res, 'MissingAuthenticationTokenException', /^Missing Authentication Token$/);
});
test('bearer API key', async () => {
  const ok = await fetch(`${mock.url}/model/${MODEL}/converse`, { method: 'POST', body: JSON.stringify(conversation),
                                                             headers: { authorization: 'Bearer bedrock-api-key-mock' } });
  assert.equal(ok.status, 200);
  const bad = await fetch(`${mock.url}/model/${MODEL}/converse`, { method: 'POST', body: JSON.stringify(conversation),
                                                              headers: { authorization: 'Bearer wrong' } });
  await rejected(bad, 'UnrecognizedClientException', /invalid/);
});
test('stats', async () => {
  const stats = await mock.stats();
  assert.equal(stats.bedrock_requests, 20);
  assert.equal(stats.bedrock_requests_signed, 17);
  assert.equal(stats.bedrock_requests_bearer, 2);
  assert.equal(stats.bedrock_signatures_valid, 14);
  assert.equal(stats.bedrock_signatures_invalid, 6);
});

});
