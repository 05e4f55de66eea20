import { topicKind } from '../protocol.gen';
import type { AgentSession, Provider, Topic } from '../protocol.gen';

/** Agent sessions' topics are `agent-session:<id>` (the generated `topicKind` knows the
 * spelling); every topic operation works on them. */
export function isAgentTopic(topicId: string | undefined): boolean {
  return topicId !== undefined && topicKind(topicId) === 'agent_session';
}

/** The agent's name as the user knows it: "Claude Code", or the ACP agent's name. */
export function agentName(session: Pick<AgentSession, 'agentName'>): string {
  return session.agentName;
}

/** Who the agent talks through: a provider's name, or the user's own login. */
export function providerLabel(session: AgentSession, providers: readonly Provider[]): string {
  if (session.providerId === undefined) return `My ${agentName(session)} login`;
  return providers.find((provider) => provider.id === session.providerId)?.name ?? 'a removed provider';
}

/** The model in words: empty means the agent picks. */
export function modelLabel(model: string): string {
  return model.trim() === '' ? 'default model' : model;
}

/**
 * A session as a topic entry, for places that name topics (approval rules, the audit log):
 * its title says it is an agent session.
 */
export function sessionAsTopic(session: AgentSession): Topic {
  return {
    id: session.topicId,
    title: `${agentName(session)}: ${session.title || 'Untitled'}`,
    workspace: session.workspace,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
  };
}

/** What the main area shows for the selected id. */
export type OpenConversation =
  | { kind: 'topic'; topic: Topic }
  | { kind: 'session'; session: AgentSession }
  /** A session was asked for (e.g. `#topic=agent-session:…`) and the sessions are not read yet. */
  | { kind: 'loading' }
  | { kind: 'none' };

/**
 * The conversation to show: the selected topic or session if it exists, else the newest
 * topic (a deleted or unknown id falls back to it), else nothing.
 */
export function openConversation(
  selectedId: string | undefined,
  topics: readonly Topic[],
  sessions: readonly AgentSession[] | undefined,
): OpenConversation {
  if (isAgentTopic(selectedId)) {
    if (sessions === undefined) return { kind: 'loading' };
    const session = sessions.find((candidate) => candidate.topicId === selectedId);
    if (session) return { kind: 'session', session };
  } else {
    const topic = topics.find((candidate) => candidate.id === selectedId);
    if (topic) return { kind: 'topic', topic };
  }
  const first = topics[0];
  return first ? { kind: 'topic', topic: first } : { kind: 'none' };
}

/** The id of what {@link openConversation} chose, if anything. */
export function openId(open: OpenConversation): string | undefined {
  if (open.kind === 'topic') return open.topic.id;
  if (open.kind === 'session') return open.session.topicId;
  return undefined;
}
