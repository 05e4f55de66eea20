import { createElement, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorHint, errorTitle } from '../src/backend/describe';
import { ACP_FEATURES, AGENT_FEATURES, CHAT_FEATURES, featuresFor, replyActions } from '../src/chat/features';
import { replyBlocks, type ChatMessage } from '../src/chat/messages';
import { compactionMarker, formatTokens, replyCost, steerNote } from '../src/chat/replyNotes';
import { AgentSessionContext, type AgentSessionActions } from '../src/components/AgentSessionContext';
import { BackendContext } from '../src/components/BackendContext';
import { loadMarkdown } from '../src/components/LazyMarkdown';
import { isLocalImage, remoteHost } from '../src/components/MarkdownImage';
import { MessageView } from '../src/components/MessageView';
import type { Backend } from '../src/backend/backend';
import type { ApiError, MessageMetadata, UiPart } from '../src/protocol.gen';

const reply = (parts: UiPart[], metadata: MessageMetadata = { status: 'success' }): ChatMessage => ({ id: 'r1', role: 'assistant', parts, metadata });

function render(message: ChatMessage, session?: AgentSessionActions): string {
  let node: ReactNode = createElement(MessageView, { message, isLive: false });
  if (session) node = createElement(AgentSessionContext.Provider, { value: session }, node);
  return renderToStaticMarkup(node);
}

describe('compaction and steering notes', () => {
  it('marks where the context was compacted, by how much and why', () => {
    expect(compactionMarker({ state: 'done', trigger: 'auto', preTokens: 154_321, postTokens: 8_400 })).toEqual({
      state: 'done',
      label: 'Context compacted',
      detail: 'automatically, as the context was full, 154k → 8.4k tokens',
    });
    expect(compactionMarker({ state: 'done', trigger: 'manual' })).toMatchObject({ detail: 'on request' });
    expect(compactionMarker({ state: 'started' })).toMatchObject({ label: 'Compacting the context…' });
    expect(compactionMarker({ state: 'error', message: 'too short' })).toMatchObject({ state: 'error', detail: 'too short' });
    expect(compactionMarker({ state: 'weird' })).toBeUndefined();
    expect(compactionMarker('done')).toBeUndefined();
    expect(formatTokens(999)).toBe('999');
    expect(formatTokens(2_000)).toBe('2k');
  });

  it('says whether a steering message went into the running turn', () => {
    expect(steerNote({ state: 'delivered' })?.text).toBe('Your message went in at the next step.');
    expect(steerNote({ state: 'undelivered' })?.text).toMatch(/after the last step; it runs as the next turn/);
    expect(steerNote({})).toBeUndefined();
  });

  it('says when an ACP agent had the message queued, or the turn was interrupted for it', () => {
    expect(steerNote({ state: 'queued' })?.text).toMatch(/^Queued — .*sent as the next prompt after it/);
    expect(steerNote({ state: 'interrupted' })?.text).toMatch(/^Interrupted — /);
    const queued = render(reply([{ type: 'text', text: 'Done.' }, { type: 'data-steer', data: { state: 'queued' } }]));
    expect(queued).toContain('data-testid="message-steer-note" data-state="queued"');
    expect(queued).toContain('Queued — ');

    // Interrupt: the stopped marker says Interrupted, not "You stopped this reply".
    const interrupted = reply([{ type: 'text', text: 'Half' }, { type: 'data-steer', data: { state: 'interrupted' } }], {
      status: 'paused',
      statusReason: 'user_stop',
    });
    const html = render(interrupted);
    expect(html).toContain('data-testid="message-steer-note" data-state="interrupted"');
    expect(html).toContain('data-interrupted="true"');
    expect(html).toContain('You interrupted this reply to send your message');
    expect(html).not.toContain('You stopped this reply');
    const stopped = render(reply([{ type: 'text', text: 'Half' }], { status: 'paused', statusReason: 'user_stop' }));
    expect(stopped).toContain('You stopped this reply');
    expect(stopped).not.toContain('data-interrupted');
  });

  it('puts the markers where they happened among the text and tool calls', () => {
    const blocks = replyBlocks([
      { type: 'text', text: 'Before.' },
      { type: 'data-compaction', id: 'compaction-1', data: { state: 'done' } },
      { type: 'text', text: 'After.' },
      { type: 'data-steer', data: { state: 'delivered' } },
      { type: 'data-other', data: {} },
    ]);
    expect(blocks.map((block) => block.kind)).toEqual(['text', 'compaction', 'text', 'steer']);
  });

  it('shows what the turn cost, subtly rounded, and nothing without a cost', () => {
    const cost = (costUsd: unknown) => replyCost({ costUsd } as MessageMetadata);
    expect(cost(0.030765)).toBe('$0.03');
    expect(cost(1.5)).toBe('$1.50');
    expect(cost(0.004)).toBe('<$0.01');
    expect(cost('0.5')).toBeUndefined();
    expect(replyCost(undefined)).toBeUndefined();
  });

  it('renders the marker, the note and the cost, and never the resume token', () => {
    const html = render(
      reply(
        [
          { type: 'text', text: 'Done.' },
          { type: 'data-compaction', id: 'compaction-1', data: { state: 'done', preTokens: 5000, postTokens: 1000 } },
          { type: 'data-steer', data: { state: 'undelivered' } },
        ],
        { status: 'success', model: 'claude-sonnet-4-5', costUsd: 0.25, resumeToken: 'secret-token' } as MessageMetadata,
      ),
    );
    expect(html).toContain('data-testid="message-compaction" data-state="done"');
    expect(html).toContain('5k → 1k tokens');
    expect(html).toContain('data-testid="message-steer-note" data-state="undelivered"');
    expect(html).toContain('data-testid="message-cost"');
    expect(html).toContain('$0.25');
    expect(html).not.toContain('secret-token');
  });
});

describe('agent errors', () => {
  const agentError = (code: string, message = 'boom'): ApiError => ({ kind: 'provider', message, retryable: true, code });

  it('are titled for the agent, with what to do', () => {
    expect(errorTitle(agentError('agent_not_installed'))).toBe('Claude Code is not installed');
    expect(errorHint(agentError('agent_not_installed'))).toMatch(/Install it/);
    expect(errorTitle(agentError('resume_failed'))).toBe('Claude Code could not resume its session');
    expect(errorHint(agentError('resume_failed'))).toMatch(/fresh Claude Code session/);
    expect(errorTitle(agentError('agent'))).toBe('Claude Code stopped with an error');
    expect(errorTitle(agentError('rate_limit'))).toBe('The provider is rate-limiting requests');
  });

  const failed = (code: string) => reply([{ type: 'data-error', data: agentError(code, 'could not resume session 0b5e') }], { status: 'error' });
  const session = (resumable: boolean): AgentSessionActions => ({ resumable, reset: () => Promise.resolve(undefined) });

  it('offer a fresh agent session after a failed resume, inside a session only', () => {
    expect(render(failed('resume_failed'), session(true))).toContain('Start a fresh Claude Code session');
    expect(render(failed('resume_failed'), session(false))).toContain('data-testid="agent-reset-done"');
    expect(render(failed('resume_failed'))).not.toContain('data-testid="agent-reset"');
    expect(render(failed('agent'), session(true))).not.toContain('data-testid="agent-reset"');
  });
});

describe('what an agent session offers', () => {
  const stopped = reply([{ type: 'text', text: 'Half' }], { status: 'paused', statusReason: 'user_stop' });
  const finished = reply([{ type: 'text', text: 'All' }]);

  it('has no Retry, no Add model, no files, no model choice and no versions, edit, fork or delete; Continue stays', () => {
    expect(featuresFor('agent-session:s1')).toBe(AGENT_FEATURES);
    expect(featuresFor('topic-1')).toBe(CHAT_FEATURES);
    expect(AGENT_FEATURES).toEqual({ retry: false, addModel: false, attachments: false, pickModels: false, tree: false });
    // An ACP agent takes files (as its prompt capabilities allow; the backend checks).
    expect(ACP_FEATURES).toEqual({ ...AGENT_FEATURES, attachments: true });
    expect(CHAT_FEATURES.tree).toBe(true);
    expect(replyActions(stopped, false, AGENT_FEATURES)).toEqual({ continue: true, retry: false });
    expect(replyActions(finished, false, AGENT_FEATURES)).toEqual({ continue: false, retry: false });
    expect(replyActions(finished, false, CHAT_FEATURES)).toEqual({ continue: false, retry: true });
    expect(replyActions(stopped, true, CHAT_FEATURES)).toEqual({ continue: false, retry: false });
  });
});

describe('images in a reply', () => {
  // A reply renders as markdown once the renderer has loaded (it is plain text until then).
  beforeAll(async () => {
    await loadMarkdown();
  });

  const backend: Backend = {
    call: () => Promise.reject(new Error('not called while rendering')),
    subscribe: () => Promise.reject(new Error('unused')),
    subscribeStatus: () => Promise.reject(new Error('unused')),
    openWindow: () => Promise.resolve(),
  };
  const renderText = (text: string) =>
    renderToStaticMarkup(
      createElement(
        BackendContext.Provider,
        { value: backend },
        createElement(MessageView, { message: reply([{ type: 'text', text, state: 'done' }]), isLive: false }),
      ),
    );

  it('audit_03: a remote image in a reply is not loaded until the user asks, and says from where', () => {
    const html = renderText('Here: ![chart](https://x.example/p.png?d=secret) done');
    expect(html).not.toMatch(/<img[^>]*x\.example/);
    expect(html).toContain('Load image from x.example');
    expect(html).toContain('data-testid="markdown-image-load"');
  });

  it('audit_03: an image of another scheme is never loaded', () => {
    const html = renderText('![x](ftp://x.example/p.png)');
    expect(html).not.toContain('<img');
  });

  it('audit_03: only http(s) URLs name a host to load from', () => {
    expect(remoteHost('https://x.example:8443/a.png')).toBe('x.example:8443');
    expect(remoteHost('javascript:alert(1)')).toBeNull();
    expect(isLocalImage('blob:https://x.example/1')).toBe(true);
    expect(isLocalImage('data:image/png;base64,iVBORw0KGgo=')).toBe(true);
    expect(isLocalImage('https://x.example/a.png')).toBe(false);
  });
});
