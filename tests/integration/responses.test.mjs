// The OpenAI Responses API through the gateway, against sluice-mock-upstream's Responses and
// Messages endpoints: passthrough to an OpenAI upstream (stream and not, byte for byte), GET
// /v1/responses/{id} routed to the provider that stored the response, previous_response_id
// continuations, the 400 for a continuation whose upstream does not speak Responses, and a
// Responses caller translated to an Anthropic upstream.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  LIMITED_KEY,
  PROVIDER_KEY,
  collectSse,
  gatewayConfig,
  getJson,
  jsonEvents,
  postJson,
  useStack,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(
  {
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl);
      cfg.providers.push(
        {
          id: 'claude',
          adapter: 'anthropic',
          base_url: m.baseUrl,
          api_key: PROVIDER_KEY,
          forward_headers: ['x-mock-*'],
        },
        {
          id: 'compat',
          adapter: 'openai',
          base_url: m.baseUrl,
          responses_api: false,
          forward_headers: ['x-mock-*'],
        },
        { id: 'azure', adapter: 'azure_openai', base_url: `${m.url}/openai`, api_key: PROVIDER_KEY },
      );
      cfg.routes.push(
        { alias: 'claude-test', provider: 'claude', model: 'claude-sonnet-4-5' },
        { alias: 'compat-test', provider: 'compat', model: 'compat-model' },
        { alias: 'azure-test', provider: 'azure', model: 'my-deployment' },
      );
      cfg.keys[1].models.push('gpt-test');
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

const lastUpstream = async () => (await mock.stats()).last_request;

async function direct(path, body, headers = {}) {
  return fetch(`${mock.baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function getResponse(id, key = GATEWAY_KEY, query = '') {
  const res = await fetch(`${gw.url}/v1/responses/${id}${query}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const ids = (t) => t.replace(/(resp|msg|fc)_mock_\d+/g, '$1_mock_N').replace(/"(created_at|completed_at)":\d+/g, '"$1":0');

describe('Responses caller, OpenAI upstream: passthrough', () => {
  test('non-stream: the caller bytes reach /responses with the model replaced; the answer comes back verbatim', async () => {
    const request = {
      model: 'gpt-test',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello there' }] }],
      instructions: 'Be brief.',
      // Fields the IR cannot carry reach a Responses upstream untouched.
      tools: [{ type: 'web_search' }],
      text: { format: { type: 'text' } },
      metadata: { trace: 'abc' },
    };
    const r = await postJson(gw, '/v1/responses', request, { headers: { 'x-mock-events': '3' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.object, 'response');
    assert.equal(r.json.output[0].content[0].text, 'Mock reply w1 w2 w3');
    assert.equal(r.headers.get('x-sluice-provider'), 'up');

    const lr = await lastUpstream();
    assert.match(lr.target, /\/v1\/responses$/);
    assert.equal(lr.method, 'POST');
    assert.equal(lr.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    assert.deepEqual(JSON.parse(lr.body), { ...request, model: 'mock-model' });

    // Byte-identical to what the upstream answers the same request directly.
    const d = await direct('/responses', { ...request, model: 'mock-model' }, { 'x-mock-events': '3' });
    assert.equal(ids(r.text), ids(await d.text()));

    const entry = await gw.waitForLog((e) => e.path === '/v1/responses' && e.stream === false);
    assert.equal(entry.api, 'openai_responses');
    assert.equal(entry.upstream[0].passthrough, true);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.usage.input_tokens, r.json.usage.input_tokens);
    assert.equal(entry.usage.output_tokens, r.json.usage.output_tokens);
  });

  test('stream: events relayed byte for byte, usage sniffed from response.completed', async () => {
    const request = { model: 'gpt-test', input: 'stream please', stream: true };
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', 'x-mock-events': '4' },
      body: JSON.stringify(request),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const { events, text } = await collectSse(res);
    const names = events.map((e) => e.event);
    assert.equal(names[0], 'response.created');
    assert.equal(names.at(-1), 'response.completed');
    assert.ok(!text.includes('[DONE]'));
    const deltas = jsonEvents(events).filter((e) => e.type === 'response.output_text.delta');
    assert.equal(deltas.map((e) => e.delta).join(''), 'Mock reply w1 w2 w3 w4');

    const d = await direct('/responses', { ...request, model: 'mock-model' }, { 'x-mock-events': '4' });
    assert.equal(ids(text), ids(await d.text()));

    const completed = jsonEvents(events).at(-1).response;
    const entry = await gw.waitForLog((e) => e.path === '/v1/responses' && e.stream === true);
    assert.equal(entry.upstream[0].passthrough, true);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.finish_reason, 'stop');
    assert.equal(entry.usage.input_tokens, completed.usage.input_tokens);
    assert.equal(entry.usage.output_tokens, completed.usage.output_tokens);
  });

  test('function tools pass through and come back as function_call items', async () => {
    const r = await postJson(gw, '/v1/responses', {
      model: 'gpt-test',
      input: 'weather?',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }],
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.output[0].type, 'function_call');
    assert.equal(r.json.output[0].name, 'get_weather');
    assert.equal(r.json.output[0].call_id, 'call_mock_1');
  });

  test('an upstream error keeps its OpenAI shape and status', async () => {
    const r = await postJson(gw, '/v1/responses', { model: 'gpt-test', input: 'x' }, {
      headers: { 'x-mock-status': '429', 'x-mock-retry-after': '3' },
    });
    assert.equal(r.status, 429);
    assert.ok(r.json.error.message);
    assert.equal(r.headers.get('retry-after'), '3');
  });
});

describe('Responses caller, Azure OpenAI upstream', () => {
  test('passed through to the v1 surface (no deployment segment, no dated api-version), and found again by id', async () => {
    const r = await postJson(gw, '/v1/responses', { model: 'azure-test', input: 'hello azure' });
    assert.equal(r.status, 200, r.text);
    let lr = await lastUpstream();
    assert.equal(lr.target, '/openai/v1/responses');
    assert.equal(lr.headers['api-key'], PROVIDER_KEY);
    assert.equal(JSON.parse(lr.body).model, 'my-deployment');
    const got = await getResponse(r.json.id);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.headers.get('x-sluice-provider'), 'azure');
    lr = await lastUpstream();
    assert.equal(lr.target, `/openai/v1/responses/${r.json.id}`);
  });
});

describe('GET /v1/responses/{id}', () => {
  test('reaches the provider that stored the response and relays it verbatim', async () => {
    const created = await postJson(gw, '/v1/responses', { model: 'gpt-test', input: 'remember me' });
    assert.equal(created.status, 200);
    const id = created.json.id;
    assert.match(id, /^resp_mock_\d+$/);

    const got = await getResponse(id, GATEWAY_KEY, '?include[]=message.output_text.logprobs');
    assert.equal(got.status, 200, got.text);
    assert.equal(got.headers.get('x-sluice-provider'), 'up');
    const lr = await lastUpstream();
    assert.equal(lr.method, 'GET');
    assert.match(lr.target, new RegExp(`/v1/responses/${id}\\?include`));
    assert.equal(lr.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    const d = await direct(`/responses/${id}`);
    assert.equal(got.text, await d.text());
    assert.equal(JSON.parse(got.text).output[0].content[0].text, created.json.output[0].content[0].text);

    // Mock ids restart with every test: find this GET's own line.
    const entry = await gw.waitForLog((e) => e.request_id === got.headers.get('x-request-id'));
    assert.equal(entry.method, 'GET');
    assert.equal(entry.status, 200);
    assert.equal(entry.upstream[0].provider, 'up');
  });

  test('a streamed response is found by the id of its response.created', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', input: 'stream and keep', stream: true }),
    });
    const { events } = await collectSse(res);
    const id = jsonEvents(events)[0].response.id;
    const got = await getResponse(id);
    assert.equal(got.status, 200, got.text);
    assert.equal(JSON.parse(got.text).status, 'completed');
  });

  test('unknown ids, store:false answers and other keys get a 404 saying the gateway has no record', async () => {
    let got = await getResponse('resp_never_made');
    assert.equal(got.status, 404);
    const body = JSON.parse(got.text);
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /The gateway has no record of 'resp_never_made'/);
    assert.equal(got.headers.get('x-should-retry'), 'false');

    const unstored = await postJson(gw, '/v1/responses', { model: 'gpt-test', input: 'x', store: false });
    assert.equal(unstored.status, 200);
    got = await getResponse(unstored.json.id);
    assert.equal(got.status, 404);

    const mine = await postJson(gw, '/v1/responses', { model: 'gpt-test', input: 'mine' });
    got = await getResponse(mine.json.id, LIMITED_KEY);
    assert.equal(got.status, 404, 'another key cannot read it');
    got = await getResponse(mine.json.id);
    assert.equal(got.status, 200);

    got = await getResponse('resp_x', 'sk-wrong-key');
    assert.equal(got.status, 401);
  });

  test('the upstream\'s own 404 is relayed as it is', async () => {
    const created = await postJson(gw, '/v1/responses', { model: 'gpt-test', input: 'soon gone' });
    await mock.reset(); // the mock forgets its stored responses
    const got = await getResponse(created.json.id);
    assert.equal(got.status, 404);
    assert.equal(JSON.parse(got.text).error.message, `Response with id '${created.json.id}' not found.`);
  });
});

describe('previous_response_id', () => {
  test('passes through to the Responses upstream that stored the previous response', async () => {
    const first = await postJson(gw, '/v1/responses', { model: 'gpt-test', input: 'first turn' });
    const second = await postJson(gw, '/v1/responses', {
      model: 'gpt-test',
      input: 'second turn',
      previous_response_id: first.json.id,
    });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.json.previous_response_id, first.json.id);
    assert.equal(JSON.parse((await lastUpstream()).body).previous_response_id, first.json.id);

    const unknown = await postJson(gw, '/v1/responses', {
      model: 'gpt-test',
      input: 'x',
      previous_response_id: 'resp_unknown',
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.error.code, 'previous_response_not_found');
  });

  test('to an upstream that does not speak Responses is a clear 400', async () => {
    const first = await postJson(gw, '/v1/responses', { model: 'gpt-test', input: 'first turn' });
    for (const model of ['claude-test', 'mock-chat', 'compat-test']) {
      const before = (await mock.stats()).requests_total;
      const r = await postJson(gw, '/v1/responses', {
        model,
        input: 'second turn',
        previous_response_id: first.json.id,
      });
      assert.equal(r.status, 400, `${model}: ${r.text}`);
      assert.equal(r.json.error.type, 'invalid_request_error');
      assert.equal(r.json.error.param, 'previous_response_id');
      assert.match(r.json.error.message, /does not speak the Responses API/);
      assert.equal((await mock.stats()).requests_total, before, 'nothing went upstream');
    }
  });
});

describe('Responses caller, other upstreams: translation', () => {
  test('Anthropic upstream, non-stream: a Messages request goes up, a response object comes back', async () => {
    const r = await postJson(gw, '/v1/responses', {
      model: 'claude-test',
      instructions: 'Be brief.',
      input: [{ role: 'user', content: 'hello claude' }],
      max_output_tokens: 64,
    }, { headers: { 'x-mock-events': '2' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.object, 'response');
    assert.equal(r.json.status, 'completed');
    assert.match(r.json.id, /^resp_msg_mock_\d+$/);
    assert.equal(r.json.output[0].type, 'message');
    assert.equal(r.json.output[0].content[0].text, 'Mock reply w1 w2');

    const lr = await lastUpstream();
    assert.match(lr.target, /\/v1\/messages$/);
    const sent = JSON.parse(lr.body);
    assert.equal(sent.model, 'claude-sonnet-4-5');
    assert.equal(sent.system, 'Be brief.');
    assert.equal(sent.max_tokens, 64);
    assert.deepEqual(sent.messages, [{ role: 'user', content: 'hello claude' }]);

    // Usage as the upstream reported it (Anthropic's input excludes cache; none here).
    const d = await direct('/messages', sent, { 'x-mock-events': '2' });
    const upstream = (await d.json()).usage;
    assert.equal(r.json.usage.input_tokens, upstream.input_tokens);
    assert.equal(r.json.usage.output_tokens, upstream.output_tokens);
    assert.equal(r.json.usage.total_tokens, upstream.input_tokens + upstream.output_tokens);

    const entry = await gw.waitForLog(
      (e) => e.alias === 'claude-test' && e.stream === false && e.status === 200 && e.api === 'openai_responses',
    );
    assert.equal(entry.upstream[0].passthrough, false);
    assert.equal(entry.usage.input_tokens, upstream.input_tokens);
  });

  test('Anthropic upstream, stream: a valid Responses event stream with the usage in response.completed', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', 'x-mock-events': '3' },
      body: JSON.stringify({ model: 'claude-test', input: 'stream claude', stream: true }),
    });
    assert.equal(res.status, 200);
    const { events } = await collectSse(res);
    const data = jsonEvents(events);
    assert.deepEqual(events.map((e) => e.event), data.map((e) => e.type));
    data.forEach((e, i) => assert.equal(e.sequence_number, i));
    assert.equal(data[0].type, 'response.created');
    assert.equal(data.at(-1).type, 'response.completed');
    const text = data.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(text, 'Mock reply w1 w2 w3');
    const final = data.at(-1).response;
    assert.equal(final.output[0].content[0].text, text);
    const sent = JSON.parse((await lastUpstream()).body);
    assert.equal(sent.stream, true);
    const d = await direct('/messages', { ...sent, stream: false }, { 'x-mock-events': '3' });
    const upstream = (await d.json()).usage;
    assert.equal(final.usage.input_tokens, upstream.input_tokens);
    assert.equal(final.usage.output_tokens, upstream.output_tokens);
  });

  test('Anthropic upstream: function tools become tool_use and come back as function_call with call_id', async () => {
    const r = await postJson(gw, '/v1/responses', {
      model: 'claude-test',
      input: 'weather?',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }],
    });
    assert.equal(r.status, 200, r.text);
    const call = r.json.output.find((o) => o.type === 'function_call');
    assert.equal(call.name, 'get_weather');
    assert.equal(call.call_id, 'toolu_mock_1');
    assert.deepEqual(JSON.parse(call.arguments), { mock: true });
    const sent = JSON.parse((await lastUpstream()).body);
    assert.equal(sent.tools[0].name, 'get_weather');

    // The tool result goes back as a tool_result for the same id.
    const next = await postJson(gw, '/v1/responses', {
      model: 'claude-test',
      input: [
        { role: 'user', content: 'weather?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
      ],
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }],
    });
    assert.equal(next.status, 200, next.text);
    const messages = JSON.parse((await lastUpstream()).body).messages;
    assert.equal(messages[1].content[0].type, 'tool_use');
    assert.equal(messages[1].content[0].id, 'toolu_mock_1');
    assert.equal(messages[2].content[0].type, 'tool_result');
    assert.equal(messages[2].content[0].tool_use_id, 'toolu_mock_1');
  });

  test('hosted tools are left out of a translated turn, and the caller is told', async () => {
    // Codex CLI sends web_search with every turn: the turn goes on without it.
    const r = await postJson(gw, '/v1/responses', {
      model: 'claude-test',
      input: 'search',
      tools: [{ type: 'web_search', external_web_access: true }, { type: 'file_search', vector_store_ids: ['vs_1'] }],
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-sluice-dropped-tools'), 'web_search,file_search');
    const sent = JSON.parse((await lastUpstream()).body);
    assert.equal(sent.tools, undefined, 'nothing of them reaches the Anthropic upstream');
  });

  test('a namespaced tool is flattened for the upstream and named back as the caller declared it', async () => {
    // Codex CLI groups tools in namespaces; Anthropic has none. Streamed and not, the call comes
    // back with the tool's own name and its namespace.
    const tools = [
      {
        type: 'namespace',
        name: 'multi_agent_v1',
        description: 'Agents',
        tools: [{ type: 'function', name: 'spawn_agent', description: 'Spawn', parameters: { type: 'object', properties: {} } }],
      },
    ];
    const r = await postJson(gw, '/v1/responses', { model: 'claude-test', input: 'spawn one', tools });
    assert.equal(r.status, 200, r.text);
    const sent = JSON.parse((await lastUpstream()).body);
    assert.deepEqual(sent.tools.map((t) => t.name), ['multi_agent_v1__spawn_agent']);
    const call = r.json.output.find((o) => o.type === 'function_call');
    assert.equal(call.name, 'spawn_agent', r.text);
    assert.equal(call.namespace, 'multi_agent_v1');
  });

  test('tools that need the caller\'s machine cannot be translated: a 400 naming the tool', async () => {
    const r = await postJson(gw, '/v1/responses', {
      model: 'claude-test',
      input: 'click',
      tools: [{ type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'linux' }],
    });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.param, 'tools[0].type');
  });

  test('an OpenAI-compatible server without /responses gets Chat Completions', async () => {
    const r = await postJson(gw, '/v1/responses', { model: 'compat-test', input: 'hi compat' }, {
      headers: { 'x-mock-events': '2' },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.output[0].content[0].text, 'Mock reply w1 w2');
    const lr = await lastUpstream();
    assert.match(lr.target, /\/v1\/chat\/completions$/);
    assert.equal(JSON.parse(lr.body).messages[0].content, 'hi compat');
  });
});
