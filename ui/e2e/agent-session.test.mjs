// An agent session with the real Claude Code CLI (tests/agent-cli) talking to the
// testkit's Anthropic Messages mock: created in the UI on a fresh folder, its permission
// prompt answered on an approval card while the reply is still live, the file written,
// the reply finished; opened again from a deep link.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { byTestId, e2eTest, lastAssistant, normalize, REPO, tempWorkspace, typeAndEnter, useStack, waitUntil } from './harness.mjs';

const MODEL = 'claude-sonnet-4-5';
const AGENT_TIMEOUT = 60_000;

const stack = useStack({
  serverEnv: async () => ({
    COLLOQUY_CLAUDE_PATH: path.join(REPO, 'tests/agent-cli/node_modules/.bin/claude'),
    // A fresh home: no login, settings or sessions of the machine's own Claude Code.
    HOME: await tempWorkspace(),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    DISABLE_AUTOUPDATER: '1',
  }),
  setup: ({ server, testkit }) =>
    server.api('provider_create', {
      name: 'Claude mock',
      format: 'anthropic',
      baseUrl: `${new URL(testkit.url).origin}/v1`,
      apiKey: 'sk-agent-e2e',
      models: [MODEL],
      defaultModel: MODEL,
    }),
});

e2eTest(
  stack,
  'a Claude Code session created in the UI asks on an approval card while the reply streams, then writes the file',
  async () => {
    const folder = await tempWorkspace();
    const file = path.join(folder, 'hello.txt');
    const page = await stack.openApp();

    // The Agents tab and its form.
    await page.locator('[data-testid="sidebar-tab"][data-section="agents"]').click();
    await byTestId(page, 'new-agent-session-button').click();
    const form = byTestId(page, 'agent-session-form');
    await form.waitFor();
    await byTestId(page, 'agent-session-create').click();
    await form.locator('[data-testid="agent-session-workspace-error"]').waitFor();

    await byTestId(page, 'agent-session-workspace-input').fill(folder);
    await byTestId(page, 'agent-session-provider').selectOption({ label: 'Claude mock' });
    await byTestId(page, 'agent-session-model').fill(MODEL);
    assert.equal(await byTestId(page, 'agent-session-permission').inputValue(), 'default');
    await byTestId(page, 'agent-session-create').click();

    // The session opens: its header says who works where and how freely.
    const header = byTestId(page, 'agent-session-header');
    await header.waitFor();
    assert.equal(await byTestId(page, 'agent-session-agent').innerText(), 'Claude Code');
    assert.equal(await byTestId(page, 'agent-session-folder').getAttribute('title'), `Works in ${folder}`);
    assert.equal(await byTestId(page, 'agent-session-mode').getAttribute('data-mode'), 'default');
    assert.match(await header.innerText(), /Claude mock · claude-sonnet-4-5/);
    const [session] = await stack.server.api('agent_sessions_list');
    assert.equal(session.workspace, folder);
    assert.equal(session.model, MODEL);
    const hash = new URLSearchParams(new URL(page.url()).hash.slice(1));
    assert.equal(hash.get('topic'), session.topicId, 'the address names the session');
    const item = page.locator(`[data-testid="agent-session-item"][data-topic-id="${session.topicId}"]`);
    await item.waitFor();
    // No files and no model choice in an agent session's composer.
    await byTestId(page, 'composer-input').waitFor();
    assert.equal(await byTestId(page, 'attach-button').count(), 0);
    assert.equal(await byTestId(page, 'model-select').count(), 0);

    await stack.testkit.reset();
    await stack.testkit.script({
      chunks: ['I will write it.'],
      toolCalls: [{ name: 'Write', arguments: JSON.stringify({ file_path: file, content: 'hi' }) }],
    });
    await stack.testkit.script({ chunks: ['Wrote ', 'hello.txt ', 'for you.'] });
    await typeAndEnter(page, 'Write hello.txt saying hi');

    // Claude Code's permission prompt is an approval card in the reply, which is still live.
    const card = page.locator('[data-testid="approval-card"]');
    await card.waitFor({ timeout: AGENT_TIMEOUT });
    assert.match(await card.locator('[data-testid="approval-arguments"]').innerText(), /hello\.txt/);
    await byTestId(page, 'stop-button').waitFor();
    assert.equal(await lastAssistant(page).getAttribute('data-status'), 'streaming', 'the reply streams while it waits');
    await item.locator('[data-testid="topic-approval"]').waitFor();
    assert.equal(await readFile(file, 'utf8').catch(() => undefined), undefined, 'nothing is written before the answer');

    await card.locator('[data-testid="approval-allow-once"]').click();
    await waitUntil(
      'the reply finishes and is stored',
      async () => {
        const reply = lastAssistant(page);
        return (await reply.getAttribute('data-status')) === 'success' && normalize(await reply.innerText()).includes('Wrote hello.txt for you.');
      },
      { timeout: AGENT_TIMEOUT },
    );
    assert.equal(await readFile(file, 'utf8'), 'hi');
    const reply = lastAssistant(page);
    assert.match(normalize(await reply.innerText()), /I will write it\./);
    assert.equal(await reply.locator('[data-testid="tool-card"]').getAttribute('data-phase'), 'done');
    // A session's reply cannot be retried or sent to another model.
    assert.equal(await byTestId(page, 'reply-retry').count(), 0);
    assert.equal(await byTestId(page, 'add-model-button').count(), 0);
    await item.locator('[data-testid="topic-approval"]').waitFor({ state: 'detached' });
    // The first message names the session; the next turn resumes Claude Code's session.
    await waitUntil('the session is named after the first message', async () => normalize(await item.innerText()).includes('Write hello.txt saying hi'));
    await page.locator('[data-testid="agent-session-resume"][data-resumable="true"]').waitFor();

    // Settings: the permission mode changes for the next message.
    await byTestId(page, 'agent-session-settings-button').click();
    await byTestId(page, 'agent-session-settings-permission').selectOption('acceptEdits');
    await page.locator('[data-testid="agent-session-mode"][data-mode="acceptEdits"]').waitFor();
    await page.keyboard.press('Escape');
    const [updated] = await stack.server.api('agent_sessions_list');
    assert.equal(updated.permissionMode, 'acceptEdits');

    // A deep link (what "Open in new window" opens) shows the session with its history.
    const other = await stack.openApp(`${stack.server.appUrl}&topic=${encodeURIComponent(session.topicId)}`);
    await byTestId(other, 'agent-session-header').waitFor();
    await waitUntil('the other window shows the reply', async () => normalize(await lastAssistant(other).innerText()).includes('Wrote hello.txt for you.'));
    assert.equal(await other.locator('[data-testid="sidebar-tab"][data-section="agents"]').getAttribute('aria-selected'), 'true');
  },
  { timeout: 180_000 },
);
