// The OpenAI Agents SDK (@openai/agents) with its default client pointed at Sluice
// (setDefaultOpenAIClient(new OpenAI({baseURL, apiKey})), tracing off): an Agent with a function
// tool run to completion, with the default model (the Responses API) and with
// OpenAIChatCompletionsModel (Chat Completions), against an upstream of each protocol. The run
// must call the tool, send its output back through the gateway and end with the upstream's
// text; the usage the SDK adds up must be what the gateway metered.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  Agent,
  OpenAIChatCompletionsModel,
  run,
  setDefaultOpenAIClient,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import OpenAI from 'openai';
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

const WORDS = 6;
const HEADERS = {
  'x-mock-events': String(WORDS),
  'x-mock-tool-arguments': JSON.stringify({ city: 'Paris' }),
};

let client;
/** The SDK's default client, pointed at the gateway once it is up. */
function gatewayClient() {
  if (!client) {
    client = new OpenAI({ baseURL: stack.gw.baseUrl, apiKey: GATEWAY_KEY, maxRetries: 0, timeout: 15000, defaultHeaders: HEADERS });
    setDefaultOpenAIClient(client);
    setTracingDisabled(true);
  }
  return client;
}

const MODELS = {
  'default (Responses) model': { api: 'responses', needs: ['responsesIngress'], make: (alias) => (gatewayClient(), alias) },
  OpenAIChatCompletionsModel: { api: 'openai', make: (alias) => new OpenAIChatCompletionsModel(gatewayClient(), alias) },
};

const UPSTREAMS = {
  [ANTHROPIC_MODEL]: { protocol: 'anthropic' },
  [OPENAI_MODEL]: { protocol: 'openai' },
  [GEMINI_MODEL]: { protocol: 'gemini', needs: ['geminiAdapter'] },
};

function weatherAgent(model, calls) {
  const getWeather = tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `sunny, 18 C in ${city}`;
    },
  });
  return new Agent({ name: 'Weather', instructions: 'Answer weather questions with the tool.', model, tools: [getWeather] });
}

/** The usage the SDK added up over the run's model responses. */
function runUsage(result) {
  let input = 0;
  let output = 0;
  for (const r of result.rawResponses) {
    input += r.usage.inputTokens;
    output += r.usage.outputTokens;
  }
  return { input, output };
}

describe('OpenAI Agents SDK through Sluice', () => {
  for (const [modelName, m] of Object.entries(MODELS)) {
    for (const [alias, upstream] of Object.entries(UPSTREAMS)) {
      const label = `${modelName} -> ${upstream.protocol} provider`;
      const skip = requires(...(m.needs ?? []), ...(upstream.needs ?? []));

      for (const stream of [false, true]) {
        test(`${label}: a tool run to completion${stream ? ', streamed' : ''}`, skip, async () => {
          const calls = [];
          const agent = weatherAgent(m.make(alias), calls);
          let result;
          if (stream) {
            result = await run(agent, 'What is the weather in Paris?', { stream: true, maxTurns: 4 });
            let text = '';
            for await (const piece of result.toTextStream()) {
              text += piece;
            }
            await result.completed;
            assert.equal(text, MOCK_TEXT(WORDS), 'the streamed text of the final turn');
          } else {
            result = await run(agent, 'What is the weather in Paris?', { maxTurns: 4 });
          }
          assert.equal(result.finalOutput, MOCK_TEXT(WORDS));
          assert.deepEqual(calls, ['Paris'], 'the tool ran once with the model arguments');
          const kinds = result.newItems.map((i) => i.type);
          assert.deepEqual(kinds, ['tool_call_item', 'tool_call_output_item', 'message_output_item']);

          const { json: sent } = await lastUpstreamBody(stack);
          assert.ok(JSON.stringify(sent).includes('sunny, 18 C in Paris'), 'the tool output went back upstream');
          const entries = await gatewayEntries(stack);
          assert.ok(entries.every((e) => e.stream === stream));
          await assertToolLoopUsage(stack, entries, { alias, words: WORDS, caller: m.api });
          const total = sumUsage(entries);
          assert.deepEqual(runUsage(result), { input: total.input_tokens, output: total.output_tokens }, 'usage as metered');
        });
      }
    }
  }

  // The built-in mock speaking the Responses protocol: the one Responses passthrough. It never
  // calls tools, so this agent has none.
  test('default (Responses) model -> Responses upstream (passthrough): a run to completion', requires('responsesIngress'), async () => {
    gatewayClient();
    const agent = new Agent({ name: 'Plain', instructions: 'Be brief.', model: RESPONSES_MOCK_MODEL });
    const result = await run(agent, 'Say hello');
    assert.ok(typeof result.finalOutput === 'string' && result.finalOutput.length > 0);
    const entries = await gatewayEntries(stack, { extra: 1 });
    assert.equal(entries.length, 1);
    assert.equal(entries[0].upstream[0].passthrough, true);
    assert.deepEqual(runUsage(result), { input: entries[0].usage.input_tokens, output: entries[0].usage.output_tokens });
  });
});
