import { describe, expect, it } from 'vitest';
import { errorHint, errorTitle } from '../src/backend/describe';
import { replyActions } from '../src/chat/features';
import {
  blockText,
  canContinue,
  cutAtLength,
  endedEarlyReason,
  isAwaitingApproval,
  messageMarkdown,
  pauseReason,
  replyBlocks,
  stoppedHint,
  stoppedLabel,
  storedToChat,
  yieldedToSteering,
  type ChatMessage,
} from '../src/chat/messages';
import { messageTimeLabel } from '../src/chat/messageTime';
import type { StoredMessage } from '../src/protocol.gen';

const reply = (status: StoredMessage['status'], statusReason?: string): ChatMessage => ({
  id: 'm',
  role: 'assistant',
  parts: [],
  metadata: { status, ...(statusReason ? { statusReason } : {}) },
});

describe('why a reply stopped', () => {
  it('offers Continue for a stop, a stall, a crash or the tool-call limit, never while calls wait for answers', () => {
    expect(canContinue(reply('paused', 'user_stop'), false)).toBe(true);
    expect(canContinue(reply('paused', 'tool_limit'), false)).toBe(true);
    expect(canContinue(reply('paused'), false)).toBe(true);
    expect(canContinue(reply('paused', 'awaiting_approval'), false)).toBe(false);
    expect(isAwaitingApproval(reply('paused', 'awaiting_approval'), false)).toBe(true);
    expect(canContinue(reply('success'), false)).toBe(false);
    expect(pauseReason(reply('success', 'awaiting_approval'), false)).toBeUndefined();
  });

  it('notes a reply the output limit cut short, says what to do, and offers Continue beside Retry', () => {
    const cut = reply('success', 'length');
    expect(cutAtLength(cut, false)).toBe(true);
    expect(endedEarlyReason(cut, false)).toBe('length');
    expect(stoppedLabel('length')).toMatch(/length limit/);
    expect(stoppedHint('length')).toMatch(/output limit.*Continue/);
    expect(replyActions(cut, false, { retry: true })).toEqual({ continue: true, retry: true });
    // A normal finish has no note and no Continue; neither has a live reply yet.
    expect(endedEarlyReason(reply('success'), false)).toBeUndefined();
    expect(replyActions(reply('success'), false, { retry: true })).toEqual({ continue: false, retry: true });
    expect(cutAtLength(reply('paused', 'length'), false)).toBe(false);
    expect(replyActions(cut, true, { retry: true })).toEqual({ continue: false, retry: false });
  });

  it('says a reply the content filter stopped failed, and to rephrase', () => {
    const filtered = {
      kind: 'provider' as const,
      code: 'content_filtered',
      message: "the provider's content filter stopped the reply — rephrase your message, or try another model",
      retryable: false,
    };
    expect(errorTitle(filtered)).toBe("The provider's content filter stopped the reply");
    expect(errorHint(filtered)).toMatch(/Rephrase/);
    expect(endedEarlyReason(reply('error', 'content_filtered'), false)).toBeUndefined();
    expect(canContinue(reply('error', 'content_filtered'), false)).toBe(false);
  });

  it('notes a reply that yielded to a steering message', () => {
    expect(yieldedToSteering(reply('success', 'steered'), false)).toBe(true);
    expect(yieldedToSteering(reply('paused', 'steered'), false)).toBe(false);
  });

  it("takes the row's reason over a stale one in the message (a reply that waited, then finished)", () => {
    const stored: StoredMessage = {
      id: 'm',
      topicId: 't',
      status: 'success',
      message: { id: 'm', role: 'assistant', parts: [], metadata: { status: 'success', statusReason: 'awaiting_approval' } },
      revision: 3,
      createdAt: '',
      updatedAt: '',
    };
    expect(storedToChat(stored).metadata?.statusReason).toBeUndefined();
    expect(storedToChat({ ...stored, status: 'paused', statusReason: 'tool_limit' }).metadata?.statusReason).toBe('tool_limit');
  });
});

describe('replyBlocks', () => {
  it('shows parts in order, joins neighbouring text, and hides reasoning that only carries a signature', () => {
    const blocks = replyBlocks([
      { type: 'step-start' },
      { type: 'reasoning', text: '', providerMetadata: { anthropic: { signature: 'c2ln' } } },
      { type: 'reasoning', text: 'Let me look.' },
      { type: 'text', text: 'First. ' },
      { type: 'dynamic-tool', toolName: 'read_file', toolCallId: 'c1', state: 'input-available', input: {} },
      { type: 'step-start' },
      { type: 'text', text: 'Second, ' },
      { type: 'step-start' },
      { type: 'text', text: 'third.' },
      { type: 'text', text: '' },
      { type: 'source-url', sourceId: 's', url: 'https://example.com' },
    ]);
    expect(blocks.map((block) => (block.kind === 'text' ? `text:${block.parts.map((p) => p.text).join('')}` : block.kind))).toEqual([
      'reasoning',
      'text:First. ',
      'tool',
      'text:Second, third.',
    ]);
  });

  it('joins a continued reply to its kept text where it stopped, even mid-word', () => {
    // Stop after "by cu", Continue: the backend adds a step and a new text part.
    const blocks = replyBlocks([
      { type: 'step-start' },
      { type: 'text', text: 'Group the orders by cu', state: 'done' },
      { type: 'step-start' },
      { type: 'text', text: 'stomer id:\n\n- first', state: 'streaming' },
    ]);
    expect(blocks).toHaveLength(1);
    const [block] = blocks;
    expect(block?.kind === 'text' && blockText(block)).toBe('Group the orders by customer id:\n\n- first');
  });
});

describe('copying and dating a message', () => {
  it('copies the text as Markdown: a continued part joined, tool calls and thinking left out', () => {
    const message: ChatMessage = {
      id: 'm',
      role: 'assistant',
      parts: [
        { type: 'reasoning', text: 'Thinking it over.' },
        { type: 'text', text: '## Plan\n\nGroup by cu' },
        { type: 'step-start' },
        { type: 'text', text: 'stomer id.' },
        { type: 'dynamic-tool', toolName: 'run', toolCallId: 'c1', state: 'output-available', input: {}, output: 'ok' },
        { type: 'text', text: '- done' },
      ],
    };
    expect(messageMarkdown(message)).toBe('## Plan\n\nGroup by customer id.\n\n- done');
    expect(messageMarkdown({ id: 'u', role: 'user', parts: [{ type: 'text', text: 'Hi **there**' }] })).toBe('Hi **there**');
  });

  it('carries the stored time onto the message', () => {
    const stored: StoredMessage = {
      id: 'm2',
      topicId: 't',
      status: 'success',
      message: { id: 'm2', role: 'user', parts: [] },
      revision: 1,
      createdAt: '2025-03-04T09:05:00Z',
      updatedAt: '2025-03-04T09:06:00Z',
    };
    expect(storedToChat(stored).createdAt).toBe('2025-03-04T09:05:00Z');
  });

  it('labels today by the time alone, other days with the date, other years with the year', () => {
    const now = new Date('2025-03-04T18:00:00Z');
    const label = (at: string) => messageTimeLabel(at, now, 'en-GB', 'UTC');
    expect(label('2025-03-04T09:05:00Z')).toBe('9:05');
    expect(label('2025-03-01T09:05:00Z')).toBe('1 Mar, 9:05');
    expect(label('2024-12-31T23:59:00Z')).toBe('31 Dec 2024, 23:59');
    expect(label('not a time')).toBeUndefined();
    // Today in UTC is yesterday in Tokyo, where it is already 5 March.
    expect(label('2025-03-04T02:00:00Z')).toBe('2:00');
    expect(messageTimeLabel('2025-03-04T02:00:00Z', now, 'en-GB', 'Asia/Tokyo')).toBe('4 Mar, 11:00');
  });
});
