// A topic's own instructions and model settings, set in Topic settings, reach the
// request each wire format sends (as the testkit records it); an assistant's settings
// apply where the topic sets none; a bad value is refused next to its field.

import assert from 'node:assert/strict';
import { byTestId, e2eTest, lastAssistant, topicItem, typeAndEnter, useStack, waitUntil } from './harness.mjs';

const stack = useStack();
const REASONING = { scripted: { tools: true, reasoning: true, vision: false } };

/** A provider of `format` on the testkit, and a topic on its model. */
async function topicOn(format) {
  const base = new URL(stack.testkit.url).origin;
  const baseUrl = format === 'gemini' ? `${base}/v1beta` : `${base}/v1`;
  const provider = await stack.server.api('provider_create', {
    name: format,
    format,
    baseUrl,
    models: ['scripted'],
    defaultModel: 'scripted',
    capabilities: REASONING,
  });
  return stack.server.api('topic_create', { title: `On ${format}`, model: { providerId: provider.id, model: 'scripted' } });
}

async function openSettings(page) {
  await byTestId(page, 'topic-settings-button').click();
  await byTestId(page, 'topic-model-settings').waitFor();
}

/** Sends `text` in the open topic and returns the body of the request the model got. */
async function sendAndRecord(page, text) {
  await stack.testkit.reset();
  await stack.testkit.script({ chunks: ['D’accord.'] });
  await typeAndEnter(page, text);
  await waitUntil('the reply is done', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  const requests = await stack.testkit.requests();
  return requests.at(-1).body;
}

e2eTest(stack, 'instructions and model settings set in Topic settings reach each wire format in its own fields', async () => {
  const formats = ['openai_chat', 'openai_responses', 'anthropic', 'gemini'];
  const topics = [];
  for (const format of formats) topics.push(await topicOn(format));
  const page = await stack.openApp();

  for (const [index, format] of formats.entries()) {
    await topicItem(page, topics[index].id).click();
    await openSettings(page);
    await byTestId(page, 'topic-system-prompt').fill('Answer in French.');
    const settings = byTestId(page, 'topic-model-settings').locator('details');
    if (!(await settings.evaluate((element) => element.open))) await settings.locator('summary').click();
    await byTestId(page, 'topic-param-temperature').fill('0.25');
    await byTestId(page, 'topic-param-topP').fill('0.5');
    await byTestId(page, 'topic-param-maxOutputTokens').fill('300');
    await byTestId(page, 'topic-param-reasoningEffort').selectOption('low');
    await byTestId(page, 'topic-model-settings-save').click();
    await byTestId(page, 'topic-model-settings-saved').waitFor();
    await page.keyboard.press('Escape');

    const body = await sendAndRecord(page, `Hello over ${format}`);
    const found = {
      openai_chat: [body.messages?.[0]?.content, body.temperature, body.top_p, body.max_tokens, body.reasoning_effort],
      openai_responses: [body.input?.[0]?.content, body.temperature, body.top_p, body.max_output_tokens, body.reasoning?.effort],
      // Thinking runs at the default temperature, and with a top-p only from 0.95.
      anthropic: [body.system, body.temperature ?? 'none', body.top_p ?? 'none', body.max_tokens, body.thinking?.budget_tokens],
      gemini: [
        body.systemInstruction?.parts?.[0]?.text,
        body.generationConfig?.temperature,
        body.generationConfig?.topP,
        body.generationConfig?.maxOutputTokens,
        body.generationConfig?.thinkingConfig?.thinkingBudget,
      ],
    }[format];
    const expected = {
      openai_chat: ['Answer in French.', 0.25, 0.5, 300, 'low'],
      openai_responses: ['Answer in French.', 0.25, 0.5, 300, 'low'],
      anthropic: ['Answer in French.', 'none', 'none', 2048, 1024],
      gemini: ['Answer in French.', 0.25, 0.5, 300, 1024],
    }[format];
    assert.deepEqual(found, expected, `${format}: ${JSON.stringify(body)}`);
  }
});

e2eTest(stack, "an assistant's settings apply where the topic sets none, and a bad value is refused next to its field", async () => {
  const topic = await topicOn('openai_chat');
  const page = await stack.openApp();
  await byTestId(page, 'settings-button').click();
  await page.locator('[data-testid="settings-tab"][data-section="assistants"]').click();
  await byTestId(page, 'assistant-add').click();
  await byTestId(page, 'assistant-name').fill('Precise');
  await byTestId(page, 'assistant-prompt').fill('Be precise.');
  await byTestId(page, 'assistant-params').locator('summary').click();
  await byTestId(page, 'assistant-param-temperature').fill('1.5');
  await byTestId(page, 'assistant-param-maxOutputTokens').fill('64');
  await byTestId(page, 'assistant-save').click();
  await page.locator('[data-testid="assistant-item"]', { hasText: 'Precise' }).waitFor();
  await byTestId(page, 'settings-close').click();

  await topicItem(page, topic.id).click();
  await openSettings(page);
  await byTestId(page, 'topic-assistant').selectOption({ label: 'Precise' });
  await waitUntil('the topic uses the assistant', async () => (await byTestId(page, 'topic-assistant').inputValue()) !== '');
  const settings = byTestId(page, 'topic-model-settings').locator('details');
  if (!(await settings.evaluate((element) => element.open))) await settings.locator('summary').click();
  await byTestId(page, 'topic-param-temperature').fill('7');
  await byTestId(page, 'topic-model-settings-save').click();
  const error = page.locator('[data-testid="form-error"][data-field="params.temperature"]');
  await error.waitFor();
  assert.match(await error.innerText(), /0 to 2/);
  await byTestId(page, 'topic-param-temperature').fill('0.1');
  await byTestId(page, 'topic-system-prompt').fill('Use metric units.');
  await byTestId(page, 'topic-model-settings-save').click();
  await byTestId(page, 'topic-model-settings-saved').waitFor();
  await page.keyboard.press('Escape');

  const body = await sendAndRecord(page, 'How far is it?');
  assert.equal(body.messages[0].content, 'Be precise.\n\nUse metric units.');
  assert.equal(body.temperature, 0.1, "the topic's temperature wins");
  assert.equal(body.max_tokens, 64, "the assistant's longest answer applies");
});
