import type { TurnView } from './conversation';

/**
 * What an ACP agent says about itself in its replies, as the backend stores it: its plan
 * (a `data-plan` part of the reply), the slash commands it offers (`agentCommands`
 * metadata), the modes it offers (`agentModes`) and the one it is in (`agentMode`).
 * Everything here is read from the stored and live replies; nothing is kept beside them.
 */

export type PlanStatus = 'pending' | 'in_progress' | 'completed';
export type PlanPriority = 'high' | 'medium' | 'low';

export interface PlanEntry {
  content: string;
  status: PlanStatus;
  priority: PlanPriority | undefined;
}

export interface AgentCommand {
  name: string;
  description: string;
  /** What to type after the command, when it takes input. */
  hint: string | undefined;
}

export interface AgentMode {
  id: string;
  name: string;
  description: string | undefined;
}

export interface AgentState {
  /** The latest commands offered (empty: none). */
  commands: AgentCommand[];
  /** The modes offered when the agent's session last started (empty: none). */
  modes: AgentMode[];
  /** The mode it is in, as its latest reply that said one has it. */
  currentMode: string | undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

const STATUSES: readonly string[] = ['pending', 'in_progress', 'completed'];
const PRIORITIES: readonly string[] = ['high', 'medium', 'low'];

/** A `data-plan` part's entries; undefined when its data is not a plan. An entry of an unknown status reads as pending. */
export function planEntries(data: unknown): PlanEntry[] | undefined {
  const entries = record(data)?.entries;
  if (!Array.isArray(entries)) return undefined;
  return entries.flatMap((entry) => {
    const fields = record(entry);
    const content = text(fields?.content);
    if (content === undefined) return [];
    const status = text(fields?.status) ?? '';
    const priority = text(fields?.priority) ?? '';
    return [
      {
        content,
        status: (STATUSES.includes(status) ? status : 'pending') as PlanStatus,
        priority: PRIORITIES.includes(priority) ? (priority as PlanPriority) : undefined,
      },
    ];
  });
}

/** `agentCommands` metadata as commands; undefined when it is not a list. */
export function agentCommands(value: unknown): AgentCommand[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.flatMap((command) => {
    const fields = record(command);
    const name = text(fields?.name)?.trim();
    if (!name || /\s/.test(name)) return [];
    return [{ name, description: text(fields?.description) ?? '', hint: text(record(fields?.input)?.hint) }];
  });
}

/** `agentModes` metadata's offered modes; undefined when it is not such a record. */
export function agentModes(value: unknown): { modes: AgentMode[]; current: string | undefined } | undefined {
  const fields = record(value);
  const available = fields?.availableModes;
  if (!Array.isArray(available)) return undefined;
  const modes = available.flatMap((mode) => {
    const entry = record(mode);
    const id = text(entry?.id);
    if (!id) return [];
    return [{ id, name: text(entry?.name) ?? id, description: text(entry?.description) }];
  });
  return { modes, current: text(fields?.currentModeId) };
}

/** What the agent last said of its commands, modes and mode, newest reply first. */
export function agentState(turns: readonly TurnView[]): AgentState {
  let commands: AgentCommand[] | undefined;
  let offered: ReturnType<typeof agentModes>;
  let currentMode: string | undefined;
  for (let t = turns.length - 1; t >= 0; t--) {
    const replies = turns[t]?.replies ?? [];
    for (let r = replies.length - 1; r >= 0; r--) {
      const metadata = record(replies[r]?.message.metadata);
      if (!metadata) continue;
      commands ??= agentCommands(metadata.agentCommands);
      offered ??= agentModes(metadata.agentModes);
      currentMode ??= text(metadata.agentMode);
    }
    if (commands && offered && currentMode) break;
  }
  return { commands: commands ?? [], modes: offered?.modes ?? [], currentMode: currentMode ?? offered?.current };
}

/** The commands whose name starts with (or else contains) what follows the `/`. */
export function matchingCommands(commands: readonly AgentCommand[], query: string): AgentCommand[] {
  const needle = query.toLowerCase();
  const starts = commands.filter((command) => command.name.toLowerCase().startsWith(needle));
  const contains = commands.filter((command) => !command.name.toLowerCase().startsWith(needle) && command.name.toLowerCase().includes(needle));
  return [...starts, ...contains];
}
