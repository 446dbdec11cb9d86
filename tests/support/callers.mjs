// One question in each caller protocol the gateway serves, and its answer's text read back
// (complete and streamed), for suites that check every protocol against one upstream kind.
// `post(path, body, headers)` sends a JSON body through the gateway.

import { jsonEvents } from './harness.mjs';

export function callerProtocols(post) {
  return {
    chat: {
      ask: (model, stream, headers) =>
        post('/v1/chat/completions', { model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'hello' }] }, headers),
      text: (body) => JSON.parse(body).choices[0].message.content,
      streamed: (events) => jsonEvents(events).map((e) => e.choices?.[0]?.delta?.content ?? '').join(''),
    },
    anthropic: {
      ask: (model, stream, headers) =>
        post('/v1/messages', { model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'hello' }] }, { 'anthropic-version': '2023-06-01', ...headers }),
      text: (body) => JSON.parse(body).content.map((c) => c.text ?? '').join(''),
      streamed: (events) => jsonEvents(events).map((e) => (e.type === 'content_block_delta' ? e.delta.text ?? '' : '')).join(''),
    },
    gemini: {
      ask: (model, stream, headers) =>
        post(`/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }, headers),
      text: (body) => JSON.parse(body).candidates[0].content.parts.map((p) => p.text ?? '').join(''),
      streamed: (events) => jsonEvents(events).map((e) => (e.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? '').join('')).join(''),
    },
    responses: {
      ask: (model, stream, headers) => post('/v1/responses', { model, max_output_tokens: 64, stream, input: 'hello' }, headers),
      text: (body) => JSON.parse(body).output.filter((o) => o.type === 'message').map((o) => o.content.map((c) => c.text).join('')).join(''),
      streamed: (events) => jsonEvents(events).map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join(''),
    },
  };
}
