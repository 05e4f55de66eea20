// Export and import from the UI: a topic's menu exports Markdown and a web page (checked
// as downloaded files), and a Colloquy JSON file imported in Settings → Import & export
// shows up as a new topic.

import assert from 'node:assert/strict';
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  addTestkitProvider,
  byTestId,
  e2eTest,
  lastAssistant,
  newTopicAndSend,
  topicItem,
  useStack,
  waitUntil,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** Clicks an export format in the topic's menu and returns the downloaded file's name and text. */
async function exportAs(page, topicId, format) {
  const item = topicItem(page, topicId);
  await item.hover();
  await item.locator('[data-testid="topic-export"]').click();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    item.locator(`[data-testid="topic-export-format"][data-format="${format}"]`).click(),
  ]);
  const file = await download.path();
  await item.locator('[data-testid="topic-export-done"]').waitFor();
  await page.keyboard.press('Escape');
  return { name: download.suggestedFilename(), text: await readFile(file, 'utf8') };
}

e2eTest(stack, 'a topic exports as Markdown and HTML, and an exported JSON file imports as a new topic', async () => {
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Tell me about <b>tags</b> & things');
  await waitUntil('the reply is stored as success', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  const { topics } = await stack.server.api('topics_list');
  const topicId = topics[0].id;
  const reply = (await stack.server.api('messages_list', { topicId }))[1].message.parts.find((p) => p.type === 'text').text;

  const markdown = await exportAs(page, topicId, 'markdown');
  assert.match(markdown.name, /^tell-me-about-b-tags-b-things-\d{4}-\d{2}-\d{2}\.md$/);
  assert.match(markdown.text, /^# Tell me about <b>tags<\/b> & things\n/);
  assert.match(markdown.text, /## You · /);
  assert.match(markdown.text, /## Assistant \(scripted\) · /);
  assert.ok(markdown.text.includes(reply.trim().slice(0, 40)), 'the reply is in the file');

  const html = await exportAs(page, topicId, 'html');
  assert.match(html.name, /\.html$/);
  assert.match(html.text, /^<!DOCTYPE html>/);
  assert.ok(html.text.includes('Tell me about &lt;b&gt;tags&lt;/b&gt; &amp; things'), 'text is escaped');
  assert.ok(!/<script|<link|src=/.test(html.text), 'nothing to load or run');

  // Our JSON, renamed, imported from Settings.
  const exported = await stack.server.api('topic_export', { topicId, format: 'json' });
  const document = JSON.parse(exported.content);
  document.topics[0].title = 'Imported again';
  const folder = await mkdtemp(path.join(tmpdir(), 'colloquy-import-'));
  const file = path.join(folder, 'export.json');
  await writeFile(file, JSON.stringify(document));

  await byTestId(page, 'settings-button').click();
  await page.locator('[data-testid="settings-tab"][data-section="data"]').click();
  await byTestId(page, 'import-file').setInputFiles(file);
  const report = byTestId(page, 'import-report');
  await report.waitFor();
  assert.match(await report.innerText(), /Imported 1 conversation from Colloquy/);
  const item = page.locator('[data-testid="topic-item"]', { hasText: 'Imported again' });
  await item.waitFor();
  const copies = (await stack.server.api('topics_list')).topics.filter((t) => t.title === 'Imported again');
  assert.equal(copies.length, 1);
  const messages = await stack.server.api('messages_list', { topicId: copies[0].id });
  assert.equal(messages.length, 2);
  assert.equal(messages[1].message.parts.find((p) => p.type === 'text').text, reply);
});
