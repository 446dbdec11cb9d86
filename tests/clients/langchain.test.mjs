// LangChain.js chat models pointed at Sluice: ChatOpenAI (Chat Completions, and the Responses
// API with useResponsesApi) with `configuration.baseURL`, ChatAnthropic with `anthropicApiUrl`.
// For each, against an upstream of its own protocol and of the others: invoke and stream (text
// and usage_metadata), and a bindTools round trip (the call, the ToolMessage sent back, the
// answer). usage_metadata must be what the upstream reported.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

import {
  ANTHROPIC_MODEL,
  GATEWAY_KEY,
  GEMINI_MODEL,
  MOCK_TEXT,
  OPENAI_MODEL,
  RESPONSES_MOCK_MODEL,
  assertToolLoopUsage,
  gatewayEntries,
  lastUpstreamBody,
  mockInputTokens,
  mockOutputTokens,
  probeFeatures,
  protocolOfTarget,
  requires,
  sumUsage,
  useClientStack,
} from './support.mjs';

await probeFeatures();
const stack = useClientStack();

const WORDS = 5;
const HEADERS = {
  'x-mock-events': String(WORDS),
  'x-mock-tool-arguments': JSON.stringify({ city: 'Paris' }),
};

const CLIENTS = {
  ChatOpenAI: {
    api: 'openai',
    make: (model) =>
      new ChatOpenAI({ model, apiKey: GATEWAY_KEY, maxRetries: 0, configuration: { baseURL: stack.gw.baseUrl, defaultHeaders: HEADERS } }),
  },
  'ChatOpenAI (useResponsesApi)': {
    api: 'responses',
    needs: ['responsesIngress'],
    make: (model) =>
      new ChatOpenAI({
        model,
        apiKey: GATEWAY_KEY,
        maxRetries: 0,
        useResponsesApi: true,
        configuration: { baseURL: stack.gw.baseUrl, defaultHeaders: HEADERS },
      }),
  },
  ChatAnthropic: {
    api: 'anthropic',
    make: (model) =>
      new ChatAnthropic({
        model,
        apiKey: GATEWAY_KEY,
        maxRetries: 0,
        anthropicApiUrl: stack.gw.url,
        clientOptions: { defaultHeaders: HEADERS },
      }),
  },
};

const UPSTREAMS = {
  [ANTHROPIC_MODEL]: { protocol: 'anthropic' },
  [OPENAI_MODEL]: { protocol: 'openai' },
  [GEMINI_MODEL]: { protocol: 'gemini', needs: ['geminiAdapter'] },
};

const weather = tool(async ({ city }) => `sunny, 18 C in ${city}`, {
  name: 'get_weather',
  description: 'Current weather for a city',
  schema: z.object({ city: z.string() }),
});

/** The usage an access-log line recorded, as LangChain's usage_metadata states it. */
function assertUsageMetadata(usage, entry) {
  assert.ok(usage, 'usage_metadata present');
  assert.equal(usage.input_tokens, entry.usage.input_tokens, 'input_tokens as metered');
  assert.equal(usage.output_tokens, entry.usage.output_tokens, 'output_tokens as metered');
  assert.equal(usage.total_tokens, entry.usage.input_tokens + entry.usage.output_tokens);
}

/**
 * ChatAnthropic streams: LangChain takes input_tokens from message_start only, and adds
 * message_start's output_tokens to message_delta's (so it counts the 1 that Anthropic, and the
 * mock, state at the start twice; the same against Anthropic itself). A gateway translating from
 * an upstream that reports usage only at the end (OpenAI chat) can state input tokens in
 * message_start only as an estimate; the exact figure follows in message_delta, which LangChain
 * does not read.
 */
function assertAnthropicStreamUsage(usage, entry, { passthrough }) {
  assert.equal(usage.output_tokens, entry.usage.output_tokens + (passthrough ? 1 : 0), 'output_tokens: message_start + message_delta');
  if (passthrough) {
    assert.equal(usage.input_tokens, entry.usage.input_tokens, 'input_tokens as metered');
  } else {
    assert.ok(usage.input_tokens > 0, 'message_start states some input');
  }
}

describe('LangChain through Sluice', () => {
  for (const [clientName, client] of Object.entries(CLIENTS)) {
    for (const [alias, upstream] of Object.entries(UPSTREAMS)) {
      const passthrough = client.api === upstream.protocol;
      const label = `${clientName} -> ${upstream.protocol} provider`;
      const skip = requires(...(client.needs ?? []), ...(upstream.needs ?? []));

      test(`${label}: invoke and stream`, skip, async () => {
        const model = client.make(alias);
        const answer = await model.invoke([new HumanMessage('Say hello')]);
        assert.equal(answer.text, MOCK_TEXT(WORDS));
        let entries = await gatewayEntries(stack);
        assert.equal(entries.length, 1);
        assert.equal(entries[0].usage.output_tokens, mockOutputTokens(false, WORDS));
        assert.equal(entries[0].usage.input_tokens, mockInputTokens(protocolOfTarget((await lastUpstreamBody(stack)).target), (await lastUpstreamBody(stack)).json));
        assertUsageMetadata(answer.usage_metadata, entries[0]);

        stack.mark = stack.gw.accessLog().length;
        await stack.mock.reset();
        let aggregate;
        let pieces = 0;
        for await (const chunk of await model.stream([new HumanMessage('Say hello')])) {
          aggregate = aggregate ? aggregate.concat(chunk) : chunk;
          pieces += chunk.text.length > 0 ? 1 : 0;
        }
        assert.ok(pieces >= 2, `text arrives in pieces, got ${pieces}`);
        assert.equal(aggregate.text, MOCK_TEXT(WORDS));
        entries = await gatewayEntries(stack);
        assert.equal(entries.length, 1);
        assert.equal(entries[0].stream, true);
        if (client.api === 'anthropic') {
          assertAnthropicStreamUsage(aggregate.usage_metadata, entries[0], { passthrough });
        } else {
          assertUsageMetadata(aggregate.usage_metadata, entries[0]);
        }
      });

      test(`${label}: bindTools round trip`, skip, async () => {
        const model = client.make(alias).bindTools([weather]);
        const messages = [new HumanMessage('What is the weather in Paris?')];
        const first = await model.invoke(messages);
        assert.equal(first.tool_calls?.length, 1, `one tool call, got ${JSON.stringify(first.content)}`);
        const call = first.tool_calls[0];
        assert.equal(call.name, 'get_weather');
        assert.deepEqual(call.args, { city: 'Paris' });
        messages.push(first, await weather.invoke(call));
        const second = await model.invoke(messages);
        assert.equal(second.text, MOCK_TEXT(WORDS));
        assert.equal(second.tool_calls?.length ?? 0, 0);

        const { json: sent } = await lastUpstreamBody(stack);
        assert.ok(JSON.stringify(sent).includes('sunny, 18 C in Paris'), 'the tool result went back upstream');
        const entries = await gatewayEntries(stack);
        await assertToolLoopUsage(stack, entries, { alias, words: WORDS, caller: client.api });
        assertUsageMetadata(first.usage_metadata, entries[0]);
        assertUsageMetadata(second.usage_metadata, entries[1]);
        const total = sumUsage(entries);
        assert.equal(first.usage_metadata.input_tokens + second.usage_metadata.input_tokens, total.input_tokens);
      });
    }
  }

  // Gemini states promptTokenCount in its first chunk, before any text: an Anthropic caller's
  // message_start carries that figure, not the gateway's estimate (the Gemini stream decoder
  // emits a chunk's usage before its content).
  test('ChatAnthropic stream -> gemini upstream: input_tokens are Gemini\'s from the first chunk', requires('geminiAdapter'), async () => {
    const model = CLIENTS.ChatAnthropic.make(GEMINI_MODEL);
    let aggregate;
    for await (const chunk of await model.stream('Say hello')) {
      aggregate = aggregate ? aggregate.concat(chunk) : chunk;
    }
    const [entry] = await gatewayEntries(stack);
    assert.equal(aggregate.usage_metadata.input_tokens, entry.usage.input_tokens);
  });

  test('ChatOpenAI (useResponsesApi) -> Responses upstream (passthrough): invoke and stream', requires('responsesIngress'), async () => {
    const model = CLIENTS['ChatOpenAI (useResponsesApi)'].make(RESPONSES_MOCK_MODEL);
    const answer = await model.invoke('Say hello');
    assert.ok(answer.text.length > 0);
    let aggregate;
    for await (const chunk of await model.stream('Say hello')) {
      aggregate = aggregate ? aggregate.concat(chunk) : chunk;
    }
    assert.equal(aggregate.text, answer.text);
    const entries = await gatewayEntries(stack, { extra: 2 });
    assert.equal(entries.length, 2);
    assert.ok(entries.every((e) => e.upstream[0].passthrough));
    assertUsageMetadata(answer.usage_metadata, entries[0]);
    assertUsageMetadata(aggregate.usage_metadata, entries[1]);
  });
});
