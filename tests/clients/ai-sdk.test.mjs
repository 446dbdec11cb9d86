// The Vercel AI SDK (`ai` with @ai-sdk/openai, @ai-sdk/anthropic, @ai-sdk/google) pointed at
// Sluice the way its docs say to point it at any compatible server: a baseURL and a key. Every
// provider class is run against an upstream of its own protocol (passthrough) and of others
// (translation): generateText and streamText with a tool and a step limit, so the tool's result
// goes back through the gateway and the final text comes from the second call. Usage must be
// what the upstream reported, and every request must succeed.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
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
  probeFeatures,
  requires,
  sumUsage,
  useClientStack,
} from './support.mjs';

await probeFeatures();
const stack = useClientStack();

const WORDS = 4;
const HEADERS = {
  'x-mock-events': String(WORDS),
  'x-mock-tool-arguments': JSON.stringify({ city: 'Paris' }),
};

// The caller side: each AI SDK provider as its docs configure it for a self-hosted server.
const CLIENTS = {
  'openai.chat': {
    api: 'openai',
    model: (id) => createOpenAI({ baseURL: stack.gw.baseUrl, apiKey: GATEWAY_KEY }).chat(id),
  },
  'openai (Responses)': {
    api: 'responses',
    needs: ['responsesIngress'],
    model: (id) => createOpenAI({ baseURL: stack.gw.baseUrl, apiKey: GATEWAY_KEY })(id),
  },
  anthropic: {
    api: 'anthropic',
    model: (id) => createAnthropic({ baseURL: `${stack.gw.url}/v1`, apiKey: GATEWAY_KEY })(id),
  },
  google: {
    api: 'gemini',
    needs: ['geminiIngress'],
    model: (id) => createGoogleGenerativeAI({ baseURL: `${stack.gw.url}/v1beta`, apiKey: GATEWAY_KEY })(id),
  },
};

// The upstream side, and which caller speaks its protocol.
const UPSTREAMS = {
  [ANTHROPIC_MODEL]: { protocol: 'anthropic' },
  [OPENAI_MODEL]: { protocol: 'openai' },
  [GEMINI_MODEL]: { protocol: 'gemini', needs: ['geminiAdapter'] },
};

function weatherTool(calls) {
  return tool({
    description: 'Current weather for a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return { city, forecast: 'sunny, 18 C' };
    },
  });
}

/** The checks after a tool loop: steps, the tool's result upstream, usage, the access log. */
async function assertLoop({ alias, caller, calls, text, steps, totalUsage }) {
  assert.equal(text, MOCK_TEXT(WORDS));
  assert.deepEqual(calls, ['Paris'], 'the tool ran once, with the arguments the model sent');
  assert.equal(steps.length, 2);
  assert.equal(steps[0].finishReason, 'tool-calls');
  assert.equal(steps[1].finishReason, 'stop');
  const { json: sent } = await lastUpstreamBody(stack);
  assert.ok(JSON.stringify(sent).includes('sunny, 18 C'), 'the tool result went back upstream');
  const entries = await gatewayEntries(stack);
  await assertToolLoopUsage(stack, entries, { alias, words: WORDS, caller });
  const total = sumUsage(entries);
  assert.equal(totalUsage.inputTokens, total.input_tokens, 'input tokens as metered');
  assert.equal(totalUsage.outputTokens, total.output_tokens, 'output tokens as metered');
}

describe('Vercel AI SDK through Sluice', () => {
  for (const [clientName, client] of Object.entries(CLIENTS)) {
    for (const [alias, upstream] of Object.entries(UPSTREAMS)) {
      const label = `${clientName} -> ${upstream.protocol} provider`;
      const skip = requires(...(client.needs ?? []), ...(upstream.needs ?? []));

      test(`${label}: generateText with a tool`, skip, async () => {
        const calls = [];
        const result = await generateText({
          model: client.model(alias),
          prompt: 'What is the weather in Paris?',
          tools: { get_weather: weatherTool(calls) },
          stopWhen: stepCountIs(4),
          headers: HEADERS,
          maxRetries: 0,
        });
        await assertLoop({ alias, caller: client.api, calls, text: result.text, steps: result.steps, totalUsage: result.totalUsage });
        const entries = await gatewayEntries(stack);
        assert.ok(entries.every((e) => e.stream === false), 'generateText does not stream');
      });

      test(`${label}: streamText with a tool`, skip, async () => {
        const calls = [];
        const result = streamText({
          model: client.model(alias),
          prompt: 'What is the weather in Paris?',
          tools: { get_weather: weatherTool(calls) },
          stopWhen: stepCountIs(4),
          headers: HEADERS,
          maxRetries: 0,
          onError: () => {},
        });
        const chunks = [];
        for await (const chunk of result.textStream) {
          chunks.push(chunk);
        }
        assert.ok(chunks.length >= 2, `text arrives in pieces, got ${chunks.length}`);
        const steps = await result.steps;
        await assertLoop({ alias, caller: client.api, calls, text: chunks.join(''), steps, totalUsage: await result.totalUsage });
        const entries = await gatewayEntries(stack);
        assert.ok(entries.every((e) => e.stream === true), 'streamText streams');
      });
    }
  }

  // The gateway has no Responses upstream adapter; its built-in mock speaking the Responses
  // protocol is the one Responses passthrough. It never calls tools, so plain text here.
  test('openai (Responses) -> Responses upstream (passthrough): generateText and streamText', requires('responsesIngress'), async () => {
    const model = CLIENTS['openai (Responses)'].model(RESPONSES_MOCK_MODEL);
    const generated = await generateText({ model, prompt: 'Say hello', maxRetries: 0 });
    assert.ok(generated.text.length > 0);
    const streamed = streamText({ model, prompt: 'Say hello', maxRetries: 0, onError: () => {} });
    let text = '';
    for await (const chunk of streamed.textStream) {
      text += chunk;
    }
    assert.equal(text, generated.text);
    const entries = await gatewayEntries(stack, { extra: 2 });
    assert.equal(entries.length, 2);
    for (const e of entries) {
      assert.equal(e.upstream[0].passthrough, true);
    }
    assert.equal(generated.usage.inputTokens, entries[0].usage.input_tokens);
    assert.equal(generated.usage.outputTokens, entries[0].usage.output_tokens);
    const usage = await streamed.usage;
    assert.equal(usage.inputTokens, entries[1].usage.input_tokens);
    assert.equal(usage.outputTokens, entries[1].usage.output_tokens);
  });
});
