// An agent session with the real Claude Code CLI (tests/agent-cli) talking to the
// testkit's Anthropic Messages mock: created in the UI on a fresh folder, its permission
// prompt answered on an approval card while the reply is still live, the file written,
// the reply finished; opened again from a deep link. Then a steering message that goes
// into the running agent turn, one sent after the last step (it runs as the next turn),
// and the error shown when Claude Code is not installed.

import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  assistantMessages,
  byTestId,
  e2eTest,
  lastAssistant,
  normalize,
  REPO,
  tempWorkspace,
  testkitRequests,
  typeAndEnter,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';

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
    const [session] = (await stack.server.api('agent_sessions_list')).sessions;
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
    const [updated] = (await stack.server.api('agent_sessions_list')).sessions;
    assert.equal(updated.permissionMode, 'acceptEdits');

    // A deep link (what "Open in new window" opens) shows the session with its history.
    const other = await stack.openApp(`${stack.server.appUrl}&topic=${encodeURIComponent(session.topicId)}`);
    await byTestId(other, 'agent-session-header').waitFor();
    await waitUntil('the other window shows the reply', async () => normalize(await lastAssistant(other).innerText()).includes('Wrote hello.txt for you.'));
    assert.equal(await other.locator('[data-testid="sidebar-tab"][data-section="agents"]').getAttribute('aria-selected'), 'true');
  },
  { timeout: 180_000 },
);

/** A session on a fresh folder through the mock provider, opened in a new page. */
async function openSession() {
  const folder = await tempWorkspace();
  const [provider] = await stack.server.api('providers_list');
  const session = await stack.server.api('agent_session_create', { workspace: folder, providerId: provider.id, model: MODEL });
  const page = await stack.openApp(`${stack.server.appUrl}&topic=${encodeURIComponent(session.topicId)}`);
  await byTestId(page, 'agent-session-header').waitFor();
  await byTestId(page, 'composer-input').waitFor();
  return { folder, session, page };
}

e2eTest(
  stack,
  'a steering message goes into the running agent turn at its next step; the answer follows it',
  async () => {
    const { folder, page } = await openSession();
    const file = path.join(folder, 'a.txt');
    await writeFile(file, 'content A');
    await stack.testkit.reset();
    // Slow text before a Read (which runs without asking): time to steer before the tool boundary.
    await stack.testkit.script({
      chunks: words(60, 'w'),
      tokenDelayMs: 100,
      toolCalls: [{ name: 'Read', arguments: JSON.stringify({ file_path: file }) }],
    });
    await stack.testkit.script({ chunks: ['Hi! ', 'Also read a.txt.'] });
    await typeAndEnter(page, 'Read a.txt');
    await waitUntil('the reply streams', async () => normalize(await lastAssistant(page).innerText()).includes('w3'), { timeout: AGENT_TIMEOUT });
    await byTestId(page, 'composer-input').fill('Say hi first');
    await byTestId(page, 'composer-steer').click();

    await waitUntil(
      'the continuation follows the steering message',
      async () => {
        const replies = assistantMessages(page);
        return (
          (await replies.count()) === 2 &&
          (await replies.last().getAttribute('data-status')) === 'success' &&
          normalize(await replies.last().innerText()).includes('Hi! Also read a.txt.')
        );
      },
      { timeout: AGENT_TIMEOUT },
    );
    const steered = assistantMessages(page).first();
    assert.equal(await steered.locator('[data-testid="message-steer-note"]').getAttribute('data-state'), 'delivered');
    assert.match(await steered.locator('[data-testid="message-steer-note"]').innerText(), /went in at the next step/);
    await steered.locator('[data-testid="message-steered"]').waitFor();
    const users = page.locator('[data-testid="message"][data-role="user"]');
    assert.deepEqual(await users.locator('[data-testid="message-text"]').allInnerTexts(), ['Read a.txt', 'Say hi first']);
  },
  { timeout: 180_000 },
);

e2eTest(
  stack,
  'a steering message sent after the last step says so and runs once as the next turn',
  async () => {
    const { page } = await openSession();
    await stack.testkit.reset();
    // A slow answer with no tool call: no boundary for the message to go in at.
    await stack.testkit.script({ chunks: words(40, 'w'), tokenDelayMs: 100 });
    await stack.testkit.script({ chunks: ['Kiwis ', 'it is.'] });
    await typeAndEnter(page, 'Answer slowly');
    await waitUntil('the reply streams', async () => normalize(await lastAssistant(page).innerText()).includes('w3'), { timeout: AGENT_TIMEOUT });
    await byTestId(page, 'composer-input').fill('Mention kiwis');
    await byTestId(page, 'composer-steer').click();

    await waitUntil(
      'the message runs as the next turn',
      async () => {
        const replies = assistantMessages(page);
        return (
          (await replies.count()) === 2 &&
          (await replies.last().getAttribute('data-status')) === 'success' &&
          normalize(await replies.last().innerText()).includes('Kiwis it is.')
        );
      },
      { timeout: AGENT_TIMEOUT },
    );
    const missed = assistantMessages(page).first();
    const note = missed.locator('[data-testid="message-steer-note"]');
    assert.equal(await note.getAttribute('data-state'), 'undelivered');
    assert.match(await note.innerText(), /runs as the next turn/);
    assert.equal(await missed.locator('[data-testid="message-steered"]').count(), 0, 'the first reply was not split');
    const users = page.locator('[data-testid="message"][data-role="user"]');
    assert.deepEqual(await users.locator('[data-testid="message-text"]').allInnerTexts(), ['Answer slowly', 'Mention kiwis']);
    const requests = (await testkitRequests(stack.testkit)).filter((r) => r.path.startsWith('/v1/messages'));
    assert.equal(JSON.stringify(requests.at(-1).body).split('Mention kiwis').length - 1, 1, 'sent once, as its own message');
  },
  { timeout: 180_000 },
);

e2eTest(
  stack,
  'without Claude Code installed the reply says what to install, and the session works once it is there',
  async () => {
    const claude = stack.serverEnv.COLLOQUY_CLAUDE_PATH;
    stack.serverEnv.COLLOQUY_CLAUDE_PATH = path.join(await tempWorkspace(), 'claude');
    try {
      await stack.restartServer();
      const { page } = await openSession();
      await typeAndEnter(page, 'Are you there?');
      const error = lastAssistant(page).locator('[data-testid="message-error"]');
      await error.waitFor({ timeout: AGENT_TIMEOUT });
      assert.equal(await error.getAttribute('data-code'), 'agent_not_installed');
      assert.match(await error.innerText(), /Claude Code is not installed/);
      assert.match(await error.innerText(), /npm install/);
      assert.equal(await byTestId(page, 'reply-retry').count(), 0);
    } finally {
      stack.serverEnv.COLLOQUY_CLAUDE_PATH = claude;
      await stack.restartServer();
    }
    const { page } = await openSession();
    await stack.testkit.reset();
    await stack.testkit.script({ chunks: ['Here ', 'I am.'] });
    await typeAndEnter(page, 'Are you there now?');
    await waitUntil(
      'the agent answers',
      async () => (await lastAssistant(page).getAttribute('data-status')) === 'success' && normalize(await lastAssistant(page).innerText()).includes('Here I am.'),
      { timeout: AGENT_TIMEOUT },
    );
  },
  { timeout: 180_000 },
);
