// Shared set-up for the client suite: one sluice-mock-upstream playing every provider, one
// gateway in front of it with a real adapter per upstream protocol, and the checks every client
// test makes on what went through (access log, usage, what the upstream received).
//
// Aliases are real model names, as users configure them:
//   claude-sonnet-4-5  -> adapter anthropic -> the mock's Messages endpoint
//   gpt-4o-mini        -> adapter openai    -> the mock's Chat Completions endpoint
//   gemini-2.5-flash   -> adapter gemini    -> the mock's generateContent endpoints
//   gpt-4.1-resp       -> the built-in mock answering in the Responses protocol (the gateway has
//                         no Responses upstream adapter, so this is the only Responses passthrough)
//   bedrock-claude     -> adapter bedrock, Converse (SigV4-signed; the mock checks signatures)
//   bedrock-claude-invoke -> adapter bedrock, api invoke (the Messages body through InvokeModel)
//   vertex-gemini      -> adapter vertex, publisher google (OAuth tokens the mock issues)
//   vertex-claude      -> adapter vertex, publisher anthropic (rawPredict)
// Every network provider forwards x-mock-* headers, so a client can script the upstream.

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  makeTempDir,
  removeTempDir,
  runBinary,
  sluiceBin,
  startMock,
  startSluice,
  toYaml,
  waitFor,
} from '../support/harness.mjs';

export { GATEWAY_KEY, PROVIDER_KEY };

export const ANTHROPIC_MODEL = 'claude-sonnet-4-5';
export const OPENAI_MODEL = 'gpt-4o-mini';
export const GEMINI_MODEL = 'gemini-2.5-flash';
export const RESPONSES_MOCK_MODEL = 'gpt-4.1-resp';
// The Anthropic alias behind guardrails (docs/guardrails.md): the name of a claude-code test
// home directory is pseudonymised on the way up and restored on the way back, and an output
// policy holds the answer's stream back 32 characters.
export const PRIVATE_MODEL = 'claude-private';
export const BEDROCK_MODEL = 'bedrock-claude';
export const BEDROCK_INVOKE_MODEL = 'bedrock-claude-invoke';
export const VERTEX_GEMINI_MODEL = 'vertex-gemini';
export const VERTEX_CLAUDE_MODEL = 'vertex-claude';

// The cloud upstreams' credentials, as the mock checks them.
const AWS_KEY_ID = 'AKIDSLUICECLIENTS01';
const AWS_SECRET = 'sluice/clients/secret/key/00000000001';

// What each alias's upstream speaks, as the access log's `passthrough` will tell.
export const UPSTREAM_PROTOCOL = {
  [ANTHROPIC_MODEL]: 'anthropic',
  [OPENAI_MODEL]: 'openai_chat',
  [GEMINI_MODEL]: 'gemini',
  [RESPONSES_MOCK_MODEL]: 'openai_responses',
  [PRIVATE_MODEL]: 'anthropic',
  [BEDROCK_MODEL]: 'bedrock_converse',
  [BEDROCK_INVOKE_MODEL]: 'anthropic',
  [VERTEX_GEMINI_MODEL]: 'gemini',
  [VERTEX_CLAUDE_MODEL]: 'anthropic',
};

// A service account key for Vertex: written for the mock (which checks its assertions) and for
// the gateway (whose token_uri points at the mock).
function serviceAccount(dir, tokenUri, privateKey) {
  const file = path.join(dir, tokenUri ? 'sa.json' : 'mock-sa.json');
  writeFileSync(
    file,
    JSON.stringify({
      type: 'service_account',
      project_id: 'sluice-clients',
      private_key_id: 'k1',
      private_key: privateKey,
      client_email: 'gateway@sluice-clients.iam.gserviceaccount.com',
      token_uri: tokenUri ?? 'http://unused/token',
    }),
  );
  return file;
}

function config(mock, { gemini, cloud }) {
  const net = (id, adapter, baseUrl) => ({
    id,
    adapter,
    base_url: baseUrl,
    api_key: PROVIDER_KEY,
    forward_headers: ['x-mock-*'],
  });
  const providers = [
    net('anthropic', 'anthropic', mock.baseUrl),
    net('openai', 'openai', mock.baseUrl),
    { id: 'responses-mock', adapter: 'mock', mock: { protocol: 'openai_responses' } },
  ];
  const routes = [
    { alias: ANTHROPIC_MODEL, provider: 'anthropic', model: 'claude-sonnet-4-5-20250929' },
    { alias: OPENAI_MODEL, provider: 'openai', model: 'gpt-4o-mini-2024-07-18' },
    { alias: RESPONSES_MOCK_MODEL, provider: 'responses-mock', model: 'mock-1' },
    { alias: PRIVATE_MODEL, provider: 'anthropic', model: 'claude-sonnet-4-5-20250929', guardrails: ['private-homes', 'no-cards-out'] },
  ];
  if (gemini) {
    providers.push(net('gemini', 'gemini', `${mock.url}/v1beta`));
    routes.push({ alias: GEMINI_MODEL, provider: 'gemini', model: 'gemini-2.5-flash' });
  }
  if (cloud) {
    const aws = (id, extra) => ({
      id,
      adapter: 'bedrock',
      base_url: mock.url,
      forward_headers: ['x-mock-*'],
      bedrock: { region: 'us-east-1', access_key_id: AWS_KEY_ID, secret_access_key: AWS_SECRET, ...extra },
    });
    const gcp = (id, publisher) => ({
      id,
      adapter: 'vertex',
      base_url: `${mock.url}/v1`,
      forward_headers: ['x-mock-*'],
      vertex: { location: 'us-east5', publisher, credentials_file: cloud.serviceAccount },
    });
    providers.push(aws('bedrock', {}), aws('bedrock-invoke', { api: 'invoke' }));
    providers.push(gcp('vertex-google', 'google'), gcp('vertex-anthropic', 'anthropic'));
    routes.push(
      { alias: BEDROCK_MODEL, provider: 'bedrock', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
      { alias: BEDROCK_INVOKE_MODEL, provider: 'bedrock-invoke', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
      { alias: VERTEX_GEMINI_MODEL, provider: 'vertex-google', model: 'gemini-2.5-flash' },
      { alias: VERTEX_CLAUDE_MODEL, provider: 'vertex-anthropic', model: 'claude-sonnet-4-5@20250929' },
    );
  }
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 1, drain_timeout_ms: 2000 },
    providers,
    routes,
    guardrails: {
      policies: [
        { name: 'private-homes', detectors: [{ regex: 'sluice-claude-home-[A-Za-z0-9]+', name: 'home', action: 'pseudonymise' }] },
        { name: 'no-cards-out', direction: 'output', hold_back_chars: 32, detectors: [{ builtin: 'payment_card', action: 'block' }] },
      ],
    },
    keys: [{ name: 'clients', key: GATEWAY_KEY }],
  };
}

// Whether this gateway build knows the gemini adapter: check-config on a file that uses it.
async function hasGeminiAdapter(mock) {
  const dir = makeTempDir('sluice-clients-probe-');
  const file = path.join(dir, 'probe.yaml');
  writeFileSync(file, toYaml(config(mock, { gemini: true })));
  const { code, stderr } = await runBinary(sluiceBin, ['check-config', file]);
  if (code !== 0 && !/adapter/i.test(stderr)) {
    throw new Error(`check-config failed for another reason than the gemini adapter: ${stderr}`);
  }
  return code === 0;
}

// Whether the gateway serves an ingress path at all: it answers an unknown path with 404
// "no such endpoint"; any other answer (even an error about the body) means the path exists.
async function servesPath(gw, p) {
  const res = await fetch(`${gw.url}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'x-goog-api-key': GATEWAY_KEY, 'content-type': 'application/json' },
    body: '{}',
  });
  const text = await res.text();
  return !(res.status === 404 && /no such endpoint/.test(text));
}

// What the gateway build in SLUICE_BIN offers beyond chat and Messages: the suite skips a test
// that needs a missing feature, saying so, unless SLUICE_CLIENTS_STRICT=1 makes it fail.
export const features = {};

const FEATURE_TEXT = {
  geminiAdapter: 'gemini upstream adapter',
  geminiIngress: 'Gemini ingress (/v1beta/models/{m}:generateContent)',
  responsesIngress: 'OpenAI Responses ingress (/v1/responses)',
};

/** A node:test `skip` option for a test needing these features (see `features`). */
export function requires(...names) {
  const missing = names.filter((n) => features[n] === false);
  if (missing.length === 0 || process.env.SLUICE_CLIENTS_STRICT === '1') {
    return {};
  }
  return { skip: `needs the ${missing.map((n) => FEATURE_TEXT[n]).join(' and ')}, which this gateway build lacks` };
}

/**
 * Probes the gateway binary once, before the tests are declared (top-level await), so that
 * `requires()` can decide skips. Starts and stops its own short-lived mock and gateway.
 */
export async function probeFeatures() {
  const mock = await startMock({ fixtures: false });
  try {
    features.geminiAdapter = await hasGeminiAdapter(mock);
    const gw = await startSluice(config(mock, { gemini: false }));
    try {
      features.responsesIngress = await servesPath(gw, '/v1/responses');
      features.geminiIngress = await servesPath(gw, `/v1beta/models/${OPENAI_MODEL}:generateContent`);
    } finally {
      await gw.stop();
    }
  } finally {
    await mock.stop();
  }
  return features;
}

/**
 * The stack for one test file: registers before/after hooks, resets the mock before each test.
 * Returns a handle whose gw and mock are set once the stack is up.
 */
export function useClientStack() {
  const stack = { gw: null, mock: null };
  let dir;
  before(async () => {
    dir = makeTempDir('sluice-clients-cloud-');
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    stack.mock = await startMock({
      fixtures: false,
      args: [
        '--aws-access-key-id', AWS_KEY_ID, '--aws-secret-access-key', AWS_SECRET,
        '--gcp-service-account', serviceAccount(dir, null, privateKey),
      ],
    });
    const cloud = { serviceAccount: serviceAccount(dir, `${stack.mock.url}/token`, privateKey) };
    stack.gw = await startSluice(config(stack.mock, { gemini: features.geminiAdapter !== false, cloud }));
  });
  after(async () => {
    await stack.gw?.stop();
    await stack.mock?.stop();
    if (dir) removeTempDir(dir);
  });
  beforeEach(async () => {
    // The access log is written by a background thread: let the previous test's lines (one per
    // request the mock received) arrive before marking where this test's begin.
    if (stack.mark !== undefined) {
      const { requests_total: previous } = await stack.mock.stats();
      await waitFor(() => stack.gw.accessLog().length >= stack.mark + previous, {
        timeoutMs: 3000,
        message: "the previous test's access-log lines",
      }).catch(() => {});
    }
    await stack.mock.reset();
    stack.mark = stack.gw.accessLog().length;
  });
  return stack;
}

// ---------------------------------------------------------------------------------------------
// The mock's token arithmetic (tools/mock_upstream/README.md), so a test can tell what the
// upstream reported without trusting the gateway: input = characters of the text / 4 + 1
// (UTF-8 bytes, as the mock counts), output = words + 2 for text and 3 for a tool call.

const bytes = (s) => Buffer.byteLength(s, 'utf8');

function textChars(content) {
  if (typeof content === 'string') {
    return bytes(content);
  }
  let n = 0;
  if (Array.isArray(content)) {
    for (const part of content) {
      if (part && typeof part === 'object' && typeof part.text === 'string') {
        n += bytes(part.text);
      }
    }
  }
  return n;
}

/** The input tokens the mock reports for a request body of the given upstream protocol. */
export function mockInputTokens(protocol, body) {
  let chars = 0;
  if (protocol === 'openai_chat') {
    for (const m of body.messages) {
      chars += m.content === undefined || m.content === null ? 0 : textChars(m.content);
    }
  } else if (protocol === 'anthropic') {
    if (body.system !== undefined) {
      chars += textChars(body.system);
    }
    for (const m of body.messages) {
      chars += textChars(m.content);
    }
  } else if (protocol === 'gemini') {
    if (body.systemInstruction?.parts) {
      chars += textChars(body.systemInstruction.parts);
    }
    for (const c of body.contents) {
      chars += c.parts ? textChars(c.parts) : 0;
    }
  } else if (protocol === 'bedrock_converse') {
    chars += textChars(body.system ?? []);
    for (const m of body.messages) {
      chars += textChars(m.content);
    }
  } else if (protocol === 'openai_responses') {
    if (typeof body.instructions === 'string') {
      chars += bytes(body.instructions);
    }
    if (typeof body.input === 'string') {
      chars += bytes(body.input);
    } else {
      for (const item of body.input ?? []) {
        if (item && typeof item === 'object') {
          chars += item.content === undefined ? 0 : textChars(item.content);
          chars += typeof item.output === 'string' ? bytes(item.output) : 0;
        }
      }
    }
  } else {
    throw new Error(`no estimate for ${protocol}`);
  }
  return Math.floor(chars / 4) + 1;
}

export const mockOutputTokens = (toolCall, words) => (toolCall ? 3 : words + 2);

// ---------------------------------------------------------------------------------------------
// What went through the gateway

/**
 * Waits (bounded) until the gateway has logged one line per request the mock received since the
 * last reset (plus `extra` answered without the mock), and returns the lines logged since the
 * test began. Asserts that every one succeeded: a 2xx status and a complete outcome.
 */
export async function gatewayEntries(stack, { extra = 0, minimum = 1 } = {}) {
  const { requests_total: upstreamRequests } = await stack.mock.stats();
  const want = Math.max(minimum, upstreamRequests + extra);
  const entries = await waitFor(
    () => {
      const e = stack.gw.accessLog().slice(stack.mark);
      return e.length >= want ? e : null;
    },
    { timeoutMs: 3000, message: `${want} access-log lines` },
  );
  for (const e of entries) {
    assert.ok(e.status >= 200 && e.status < 300, `gateway answered ${e.status} ${e.method} ${e.path}: ${e.error_code ?? ''} ${e.error_message ?? ''}`);
    if (e.outcome !== undefined) {
      assert.equal(e.outcome, 'complete', `${e.method} ${e.path} outcome ${e.outcome}: ${e.error_message ?? ''}`);
    }
  }
  return entries;
}

/** Adds up the usage of access-log lines. */
export function sumUsage(entries) {
  const total = { input_tokens: 0, output_tokens: 0 };
  for (const e of entries) {
    assert.ok(e.usage, `no usage logged for ${e.path} (${e.alias})`);
    total.input_tokens += e.usage.input_tokens;
    total.output_tokens += e.usage.output_tokens;
  }
  return total;
}

/** The protocol of a request the mock received, from its path. */
export function protocolOfTarget(target) {
  const p = target.split('?')[0];
  if (p.endsWith('/chat/completions')) {
    return 'openai_chat';
  }
  if (p.endsWith('/responses')) {
    return 'openai_responses';
  }
  if (p.endsWith('/messages')) {
    return 'anthropic';
  }
  if (/:(stream)?[gG]enerateContent$/.test(p)) {
    return 'gemini';
  }
  if (/\/converse(-stream)?$/.test(p)) {
    return 'bedrock_converse';
  }
  if (/\/invoke(-with-response-stream)?$/.test(p) || /:(stream)?[rR]awPredict$/.test(p)) {
    return 'anthropic'; // Claude on Bedrock's InvokeModel and on Vertex AI: the Messages body
  }
  throw new Error(`unknown upstream path ${target}`);
}

// The protocol each client API speaks to the gateway, in protocolOfTarget's names.
export const CALLER_PROTOCOL = { openai: 'openai_chat', responses: 'openai_responses', anthropic: 'anthropic', gemini: 'gemini' };

// KNOWN GAP (reported): the Gemini and Responses ingresses do not implement
// IngressCodec::facts_of_body, so a non-stream answer they relay verbatim is logged without its
// finish reason.
const NO_BODY_FINISH = new Set(['gemini', 'openai_responses']);

/**
 * Checks the lines of a tool loop that went to `alias`: the first answered with a tool call, the
 * last with text of `words` words; every output figure is the mock's; the last input figure is
 * what the mock computed from the body it last received (its `last_request`). `caller` is the
 * client's API (CALLER_PROTOCOL key): the gateway must relay verbatim exactly when the upstream
 * received the caller's own protocol (an openai provider speaks chat and Responses alike).
 */
export async function assertToolLoopUsage(stack, entries, { alias, words, caller }) {
  const model = entries.filter((e) => e.alias === alias);
  assert.ok(model.length >= 2, `a tool loop makes at least two model calls, saw ${model.length}`);
  const { last_request: lr } = await stack.mock.stats();
  const protocol = protocolOfTarget(lr.target);
  const passthrough = CALLER_PROTOCOL[caller] === protocol;
  for (const e of model) {
    assert.equal(e.upstream[0].passthrough, passthrough, `passthrough for ${caller} -> ${protocol}`);
  }
  const finish = (e, want) => {
    if (!(passthrough && e.stream === false && NO_BODY_FINISH.has(protocol))) {
      assert.equal(e.finish_reason, want);
    }
  };
  finish(model[0], 'tool_calls');
  assert.equal(model[0].usage.output_tokens, mockOutputTokens(true, words));
  const last = model.at(-1);
  finish(last, 'stop');
  assert.equal(last.usage.output_tokens, mockOutputTokens(false, words));
  assert.equal(last.usage.input_tokens, mockInputTokens(protocol, JSON.parse(lr.body)), 'input tokens as the upstream reported them');
  return model;
}

/** The JSON body the mock received last. */
export async function lastUpstreamBody(stack) {
  const { last_request: lr } = await stack.mock.stats();
  assert.ok(lr, 'the upstream received a request');
  return { ...lr, json: JSON.parse(lr.body) };
}

export const MOCK_TEXT = (words) => ['Mock reply', ...Array.from({ length: words }, (_, i) => `w${i + 1}`)].join(' ');
