// The baseline of `cargo xtask bench streams`: the stock AI SDK consuming the same
// scripted testkit stream that Colloquy's pipeline consumes.
//
//   node stream.mjs --base-url http://127.0.0.1:PORT/v1 --script script.json --reps 5 --control-token TOKEN
//
// For each repetition it queues the script on the testkit (not measured), then runs
// `streamText(...).toUIMessageStream()` to the end and prints one JSON line with the
// process CPU time spent (process.cpuUsage: all threads, user + system) and what it read.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText } from 'ai';

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    script: { type: 'string' },
    reps: { type: 'string', default: '5' },
    'control-token': { type: 'string' },
  },
});
const baseURL = values['base-url'];
if (!baseURL || !values.script || !values['control-token']) {
  console.error('usage: node stream.mjs --base-url URL --script FILE --control-token TOKEN [--reps N]');
  process.exit(2);
}
const script = readFileSync(values.script, 'utf8');
const origin = new URL(baseURL).origin;
const reps = Number(values.reps);

// includeUsage: Colloquy's adapter asks for the usage frame too, so both read the same bytes.
const provider = createOpenAICompatible({ name: 'testkit', baseURL, includeUsage: true });

async function queueScript() {
  const response = await fetch(`${origin}/_testkit/script`, {
    method: 'POST',
    headers: { authorization: `Bearer ${values['control-token']}`, 'content-type': 'application/json' },
    body: script,
  });
  if (!response.ok) throw new Error(`testkit refused the script: ${response.status}`);
}

for (let rep = 0; rep < reps; rep++) {
  await queueScript();
  let streamError;
  const started = performance.now();
  const before = process.cpuUsage();
  const result = streamText({
    model: provider('scripted'),
    prompt: 'bench',
    maxRetries: 0,
    onError: ({ error }) => {
      streamError = error;
    },
  });
  let uiChunks = 0;
  let textDeltas = 0;
  let textBytes = 0;
  for await (const chunk of result.toUIMessageStream()) {
    uiChunks++;
    if (chunk.type === 'text-delta') {
      textDeltas++;
      textBytes += Buffer.byteLength(chunk.delta);
    }
  }
  const cpu = process.cpuUsage(before);
  const wallMs = performance.now() - started;
  if (streamError) throw streamError;
  console.log(JSON.stringify({ rep, cpuUs: cpu.user + cpu.system, wallMs, uiChunks, textDeltas, textBytes }));
}
