import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { agentCommands, agentModes, agentState, matchingCommands, planEntries } from '../src/chat/agentSession';
import type { TurnView } from '../src/chat/conversation';
import { replyBlocks, type ChatMessage } from '../src/chat/messages';
import { MessageView } from '../src/components/MessageView';

const turn = (key: string, metadata: Record<string, unknown>, live = false): TurnView => ({
  key,
  replies: [{ messageId: key, live, message: { id: key, role: 'assistant', parts: [], metadata } as ChatMessage }],
});

describe("an ACP agent's plan", () => {
  it('reads entries with their status and priority, leaving out what is not an entry', () => {
    expect(
      planEntries({
        entries: [
          { content: 'Look around', priority: 'high', status: 'completed' },
          { content: 'Fix it', priority: 'medium', status: 'in_progress' },
          { content: 'Odd', priority: 'urgent', status: 'someday' },
          { priority: 'low' },
        ],
      }),
    ).toEqual([
      { content: 'Look around', priority: 'high', status: 'completed' },
      { content: 'Fix it', priority: 'medium', status: 'in_progress' },
      { content: 'Odd', priority: undefined, status: 'pending' },
    ]);
    expect(planEntries({ entries: 'no' })).toBeUndefined();
    expect(planEntries(null)).toBeUndefined();
  });

  it('is a checklist in the reply, where the agent wrote it', () => {
    const message: ChatMessage = {
      id: 'r1',
      role: 'assistant',
      metadata: { status: 'success' },
      parts: [
        { type: 'data-plan', id: 'plan', data: { entries: [{ content: 'Look around', priority: 'high', status: 'completed' }, { content: 'Fix it', priority: 'low', status: 'in_progress' }] } },
        { type: 'text', text: 'Planned.' },
      ],
    };
    expect(replyBlocks(message.parts).map((block) => block.kind)).toEqual(['plan', 'text']);
    const html = renderToStaticMarkup(createElement(MessageView, { message, isLive: false }));
    expect(html).toContain('data-testid="agent-plan"');
    expect(html).toContain('Plan · 1 of 2 done');
    expect(html).toContain('data-status="completed"');
    expect(html).toContain('data-status="in_progress"');
    expect(html).toMatch(/Fix it<\/span><span class="agent-plan-priority low/);
  });
});

describe("an ACP agent's commands and modes", () => {
  it('reads the commands with their hints, and the modes offered', () => {
    expect(agentCommands([{ name: 'review', description: 'Review' }, { name: 'test', description: 'Run', input: { hint: 'which' } }, { name: 'bad name' }, 3])).toEqual([
      { name: 'review', description: 'Review', hint: undefined },
      { name: 'test', description: 'Run', hint: 'which' },
    ]);
    expect(agentCommands('x')).toBeUndefined();
    expect(agentModes({ currentModeId: 'code', availableModes: [{ id: 'code', name: 'Code' }, { name: 'no id' }] })).toEqual({
      modes: [{ id: 'code', name: 'Code', description: undefined }],
      current: 'code',
    });
  });

  it('takes the latest of each from the replies, newest first', () => {
    const turns = [
      turn('t1', { agentModes: { currentModeId: 'code', availableModes: [{ id: 'code', name: 'Code' }, { id: 'architect', name: 'Architect' }] }, agentMode: 'code', agentCommands: [{ name: 'old', description: '' }] }),
      turn('t2', { agentCommands: [{ name: 'review', description: 'Review' }] }),
      turn('t3', { agentMode: 'architect' }, true),
    ];
    const state = agentState(turns);
    expect(state.commands.map((c) => c.name)).toEqual(['review']);
    expect(state.modes.map((m) => m.id)).toEqual(['code', 'architect']);
    expect(state.currentMode).toBe('architect');
    expect(agentState([])).toEqual({ commands: [], modes: [], currentMode: undefined });
    // Only the modes' own current mode said: that one.
    expect(agentState(turns.slice(0, 1)).currentMode).toBe('code');
  });

  it('matches commands by what follows the slash, prefixes first', () => {
    const commands = agentCommands([{ name: 'retest', description: '' }, { name: 'test', description: '' }, { name: 'review', description: '' }]) ?? [];
    expect(matchingCommands(commands, 'te').map((c) => c.name)).toEqual(['test', 'retest']);
    expect(matchingCommands(commands, '').map((c) => c.name)).toEqual(['retest', 'test', 'review']);
  });
});
