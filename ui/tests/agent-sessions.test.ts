import { describe, expect, it } from 'vitest';
import {
  agentProviders,
  modelSuggestions,
  newSessionDraft,
  OWN_LOGIN,
  sessionInputFromDraft,
  sessionUpdate,
  type SessionDraft,
} from '../src/agents/sessionForm';
import { isAgentTopic, openConversation, openId, providerLabel, sessionAsTopic } from '../src/agents/sessions';
import type { AgentSession, Provider, Topic } from '../src/protocol.gen';

const provider = (id: string, format: Provider['format'], models: string[] = [], defaultModel = models[0] ?? ''): Provider => ({
  id,
  name: `Provider ${id}`,
  kind: 'openai_compatible',
  format,
  baseUrl: 'http://localhost',
  hasApiKey: true,
  models,
  defaultModel,
  capabilities: {},
  createdAt: '',
});

const providers = [provider('oa', 'openai_chat', ['gpt-4o']), provider('an', 'anthropic', ['claude-sonnet-4-5', 'claude-opus-4-1'])];

const session = (patch: Partial<AgentSession> = {}): AgentSession => ({
  id: 's1',
  topicId: 'agent-session:s1',
  title: 'Fix the tests',
  agent: 'claude_code',
  agentName: 'Claude Code',
  workspace: '/home/me/project',
  model: '',
  permissionMode: 'default',
  resumable: true,
  createdAt: '2025-01-01T00:00:00Z',
  updatedAt: '2025-01-01T00:00:00Z',
  ...patch,
});

const topic = (id: string): Topic => ({ id, title: id, createdAt: '', updatedAt: '' });

describe('new agent session form', () => {
  it('offers only Anthropic-format providers, and starts with the first and its default model', () => {
    expect(agentProviders(providers).map((p) => p.id)).toEqual(['an']);
    expect(newSessionDraft(providers)).toEqual({
      agent: 'claude_code',
      title: '',
      workspace: '',
      providerId: 'an',
      model: 'claude-sonnet-4-5',
      permissionMode: 'default',
    });
    expect(newSessionDraft([providers[0] as Provider])).toMatchObject({ providerId: OWN_LOGIN, model: '' });
  });

  it("suggests the provider's models, or Claude Code's aliases on the user's own login", () => {
    expect(modelSuggestions(providers, 'an')).toEqual(['claude-sonnet-4-5', 'claude-opus-4-1']);
    expect(modelSuggestions(providers, OWN_LOGIN)).toContain('sonnet');
    expect(modelSuggestions(providers, 'gone')).toEqual([]);
  });

  const draft = (patch: Partial<SessionDraft> = {}): SessionDraft => ({ ...newSessionDraft(providers), workspace: '/home/me/project', ...patch });

  it('builds the input: the own login sends no provider, an empty model means the default, an empty title is left out', () => {
    expect(sessionInputFromDraft(draft({ title: ' Tests ', model: ' claude-opus-4-1 ' }), providers)).toEqual({
      input: { agent: 'claude_code', title: 'Tests', workspace: '/home/me/project', providerId: 'an', model: 'claude-opus-4-1', permissionMode: 'default' },
    });
    expect(sessionInputFromDraft(draft({ providerId: OWN_LOGIN, model: '', permissionMode: 'plan' }), providers)).toEqual({
      input: { agent: 'claude_code', workspace: '/home/me/project', model: '', permissionMode: 'plan' },
    });
  });

  it('refuses a missing, relative or root folder and a provider the agent cannot use, by field', () => {
    expect(sessionInputFromDraft(draft({ workspace: ' ' }), providers)).toEqual({ errors: { workspace: expect.stringContaining('folder') } });
    // An ACP agent: no provider or model; an empty folder is the agent's own.
    expect(sessionInputFromDraft(draft({ agent: 'agent-1', workspace: '', providerId: 'gone' }), providers)).toEqual({
      input: { agent: 'acp', acpAgentId: 'agent-1', workspace: '', model: '', permissionMode: 'default' },
    });
    expect(sessionInputFromDraft(draft({ workspace: 'project' }), providers)).toEqual({ errors: { workspace: expect.stringContaining('full path') } });
    expect(sessionInputFromDraft(draft({ workspace: '/' }), providers)).toEqual({ errors: { workspace: expect.any(String) } });
    expect(sessionInputFromDraft(draft({ workspace: 'C:\\code\\app' }), providers)).toHaveProperty('input');
    expect(sessionInputFromDraft(draft({ providerId: 'oa' }), providers)).toEqual({ errors: { providerId: expect.stringContaining('Anthropic') } });
  });

  it('sends only what the settings changed', () => {
    expect(sessionUpdate(session(), { title: ' Fix the tests ' })).toBeUndefined();
    expect(sessionUpdate(session(), { title: '' })).toBeUndefined();
    expect(sessionUpdate(session(), { title: 'Renamed', model: '' })).toEqual({ id: 's1', title: 'Renamed' });
    expect(sessionUpdate(session(), { model: ' opus ', permissionMode: 'acceptEdits' })).toEqual({ id: 's1', model: 'opus', permissionMode: 'acceptEdits' });
  });
});

describe('agent sessions beside topics', () => {
  it('knows a session by its topic id, and names its provider or the own login', () => {
    expect(isAgentTopic('agent-session:s1')).toBe(true);
    expect(isAgentTopic('0190-topic')).toBe(false);
    expect(providerLabel(session({ providerId: 'an' }), providers)).toBe('Provider an');
    expect(providerLabel(session(), providers)).toBe('My Claude Code login');
    expect(sessionAsTopic(session())).toMatchObject({ id: 'agent-session:s1', title: 'Claude Code: Fix the tests' });
  });

  it('opens the selected topic or session, waits for sessions a link names, and falls back to the newest topic', () => {
    const topics = [topic('t1'), topic('t2')];
    const sessions = [session()];
    expect(openConversation('t2', topics, sessions)).toEqual({ kind: 'topic', topic: topics[1] });
    expect(openConversation('agent-session:s1', topics, sessions)).toEqual({ kind: 'session', session: sessions[0] });
    expect(openConversation('agent-session:s1', topics, undefined)).toEqual({ kind: 'loading' });
    expect(openId(openConversation('agent-session:gone', topics, sessions))).toBe('t1');
    expect(openId(openConversation(undefined, topics, undefined))).toBe('t1');
    expect(openConversation('agent-session:gone', [], sessions)).toEqual({ kind: 'none' });
  });
});
