// An ACP agent session with the scripted fake agent (tests/agent-cli/fakes/acp-agent.mjs,
// run by Node): the agent added in Settings → Coding agents, a session started on it, a
// reply streamed, a write asked on an approval card and the file written once, the
// agent's plan shown as a checklist, one of its slash commands suggested and sent, its
// mode switched, a steering message queued for after the turn, then an Interrupt, and a
// reload mid-turn that shows nothing twice.

import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { addTestkitProvider, assistantMessages, byTestId, e2eTest, lastAssistant, normalize, REPO, tempWorkspace, typeAndEnter, useStack, waitUntil } from './harness.mjs';

const FAKE_AGENT = path.join(REPO, 'tests/agent-cli/fakes/acp-agent.mjs');

// A provider, so the app opens past its first-run screen (the agent needs none).
const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** Waits until the last reply is stored `success` and says `text`. */
async function replyEnds(page, text) {
  await waitUntil(`the reply "${text}" is finished`, async () => {
    const reply = lastAssistant(page);
    return (await reply.getAttribute('data-status')) === 'success' && normalize(await reply.innerText()).includes(text);
  });
}

async function userTexts(page) {
  return page.locator('[data-testid="message"][data-role="user"] [data-testid="message-text"]').allInnerTexts();
}

e2eTest(
  stack,
  'an ACP agent added in settings runs a session: replies, approvals, plan, commands, modes, steering and a reload mid-turn',
  async () => {
    const folder = await tempWorkspace();
    const release = path.join(folder, 'release');
    const page = await stack.openApp();

    // Settings → Coding agents: the fake agent, run by Node.
    await byTestId(page, 'settings-button').click();
    await page.locator('[data-testid="settings-tab"][data-section="agents"]').click();
    await byTestId(page, 'acp-add').click();
    await byTestId(page, 'acp-name').fill('Fake agent');
    await byTestId(page, 'acp-command').fill(process.execPath);
    await byTestId(page, 'acp-args').fill(FAKE_AGENT);
    await byTestId(page, 'acp-save').click();
    await page.locator('[data-testid="acp-agent"][data-name="Fake agent"]').waitFor();
    await byTestId(page, 'settings-close').click();

    // A session on it.
    await page.locator('[data-testid="sidebar-tab"][data-section="agents"]').click();
    await byTestId(page, 'new-agent-session-button').click();
    await byTestId(page, 'agent-session-form').waitFor();
    await byTestId(page, 'agent-session-agent').selectOption({ label: 'Fake agent' });
    // Claude Code's permission modes mean nothing to an ACP agent (it has its own modes).
    assert.equal(await byTestId(page, 'agent-session-permission').count(), 0);
    await byTestId(page, 'agent-session-workspace-input').fill(folder);
    await byTestId(page, 'agent-session-create').click();
    await byTestId(page, 'agent-session-header').waitFor();
    assert.equal(await byTestId(page, 'agent-session-agent').innerText(), 'Fake agent');
    assert.equal(await byTestId(page, 'agent-session-mode').count(), 0);

    // A reply streams; the modes the agent offers are in the composer's bar.
    await typeAndEnter(page, 'hello');
    await replyEnds(page, 'Hello from the fake agent.');
    const mode = byTestId(page, 'agent-mode-select');
    await waitUntil('the mode is shown', async () => (await mode.inputValue()) === 'code');
    assert.deepEqual(await mode.locator('option').allInnerTexts(), ['Code', 'Architect']);

    // Files go to the agent as it takes them (this one: images and embedded files).
    await byTestId(page, 'attach-input').setInputFiles({ name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# hi') });
    await typeAndEnter(page, 'look');
    await replyEnds(page, 'Got resource attachment:///notes.md # hi');
    assert.equal(await byTestId(page, 'resource-picker-button').count(), 0, 'no MCP resources in an agent session');

    // A write: asked on an approval card, written once after Allow.
    await typeAndEnter(page, 'write notes.txt from the browser');
    const card = byTestId(page, 'approval-card');
    await card.waitFor();
    assert.equal(await readFile(path.join(folder, 'notes.txt'), 'utf8').catch(() => undefined), undefined);
    await card.locator('[data-testid="approval-allow-once"]').click();
    await replyEnds(page, 'Wrote notes.txt.');
    assert.equal(await readFile(path.join(folder, 'notes.txt'), 'utf8'), 'from the browser\n');
    const approvals = await stack.server.api('approvals_list', { all: true });
    assert.equal(approvals.length, 1, 'the write the approved call made was not asked again');

    // The plan, as a checklist in the reply; the agent switched its own mode meanwhile.
    await typeAndEnter(page, 'plan');
    await replyEnds(page, 'Planned.');
    const plan = lastAssistant(page).locator('[data-testid="agent-plan"]');
    assert.deepEqual(await plan.locator('[data-testid="agent-plan-entry"]').evaluateAll((entries) => entries.map((e) => e.getAttribute('data-status'))), [
      'completed',
      'in_progress',
    ]);
    assert.match(await plan.innerText(), /1 of 2 done/);
    assert.match(await plan.innerText(), /Fix it/);
    await waitUntil('the mode the agent switched to is shown', async () => (await mode.inputValue()) === 'architect');

    // A slash command: suggested with what it does and takes, put in the message, sent as text.
    const input = byTestId(page, 'composer-input');
    await input.fill('/te');
    const menu = byTestId(page, 'agent-command-menu');
    await menu.waitFor();
    const option = menu.locator('[data-testid="agent-command-option"][data-name="test"]');
    assert.match(await option.innerText(), /which tests to run/);
    assert.match(await option.innerText(), /Run the tests/);
    await input.press('Tab');
    assert.equal(await input.inputValue(), '/test ');
    await menu.waitFor({ state: 'detached' });
    await input.pressSequentially('unit');
    await input.press('Enter');
    await replyEnds(page, 'Ran /test with: unit');

    // The mode switched from the composer's bar.
    await mode.selectOption('code');
    await waitUntil('the switch is shown', async () => (await byTestId(page, 'agent-mode').getAttribute('data-mode')) === 'code');
    await typeAndEnter(page, 'mode');
    await replyEnds(page, 'Mode: code');

    // Steer: the agent takes no message mid-turn, so it is queued for after the turn.
    await rm(release, { force: true });
    await typeAndEnter(page, 'slow');
    await waitUntil('the slow reply streams', async () => normalize(await lastAssistant(page).innerText()).includes('Working slowly'));
    await input.fill('and then this');
    await waitUntil('the steer hint', async () => (await byTestId(page, 'composer-steer-hint').getAttribute('data-steer')) === 'after-turn');
    await byTestId(page, 'composer-steer').click();
    await byTestId(page, 'inbox-steer-queued').waitFor();
    await writeFile(release, '');
    await replyEnds(page, 'You said: and then this');
    const steered = assistantMessages(page).nth(-2);
    assert.match(normalize(await steered.innerText()), /Working slowly and done\./);
    await waitUntil(
      'the steered reply says the message was queued',
      async () => (await steered.locator('[data-testid="message-steer-note"]').getAttribute('data-state')) === 'queued',
    );

    // Interrupt: the turn is cancelled and the message goes now.
    await rm(release, { force: true });
    await typeAndEnter(page, 'slow');
    await waitUntil('the slow reply streams', async () => normalize(await lastAssistant(page).innerText()).includes('Working slowly'));
    await input.fill('do this instead');
    await byTestId(page, 'composer-interrupt').click();
    await replyEnds(page, 'You said: do this instead');
    const interrupted = assistantMessages(page).nth(-2);
    await waitUntil('the interrupted reply is kept as stopped', async () => (await interrupted.getAttribute('data-status')) === 'paused');
    await waitUntil(
      'it says it was interrupted',
      async () => (await interrupted.locator('[data-testid="message-steer-note"]').getAttribute('data-state')) === 'interrupted',
    );
    assert.equal(await interrupted.locator('[data-testid="message-stopped"]').getAttribute('data-interrupted'), 'true');

    // A reload mid-turn: the reply so far, once, and it goes on. (The list shows only the
    // turns near the end, so what is on the page is compared by its last turns.)
    await rm(release, { force: true });
    await typeAndEnter(page, 'slow');
    await waitUntil('the slow reply streams', async () => normalize(await lastAssistant(page).innerText()).includes('Working slowly'));
    await page.reload();
    await waitUntil('the live reply is back', async () => normalize(await lastAssistant(page).innerText()).includes('Working slowly'));
    const lastTurns = async () => ({
      users: (await userTexts(page)).slice(-2),
      replies: (await assistantMessages(page).allInnerTexts()).slice(-2).map(normalize),
    });
    const shown = await lastTurns();
    assert.deepEqual(shown.users, ['do this instead', 'slow'], 'no message twice after the reload');
    assert.match(shown.replies[0] ?? '', /You said: do this instead/);
    assert.match(shown.replies[1] ?? '', /^Working slowly/);
    await writeFile(release, '');
    await replyEnds(page, 'Working slowly and done.');
    const ended = await lastTurns();
    assert.deepEqual(ended.users, ['do this instead', 'slow']);
    assert.equal((ended.replies[1]?.match(/Working slowly/g) ?? []).length, 1, 'the text so far is not repeated');
    const [session] = (await stack.server.api('agent_sessions_list')).sessions;
    const stored = await stack.server.api('messages_list', { topicId: session.topicId });
    const texts = stored.map((row) => row.message.parts.filter((part) => part.type === 'text').map((part) => part.text).join(''));
    assert.equal(stored.length, 22, 'eleven turns, one reply each');
    assert.deepEqual(texts.slice(-2), ['slow', 'Working slowly and done.']);
    // The steering and interrupt notes are kept with their replies.
    const notes = stored.flatMap((row) => row.message.parts.filter((part) => part.type === 'data-steer').map((part) => part.data.state));
    assert.deepEqual(notes, ['queued', 'interrupted']);
  },
  { timeout: 120_000 },
);
