import { useEffect, useRef, useState, type ReactNode } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import { resourceLabel, type PendingResource } from '../chat/mcpContent';
import type { McpCompleteRequest, McpPrompt, McpPromptCatalog, McpPromptExpansion, McpPromptGetRequest } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

/** What a slash command puts into the composer. */
export interface Expansion {
  text: string;
  resources: PendingResource[];
}

/** How long typing in an argument rests before the server is asked for values. */
const COMPLETE_AFTER_MS = 250;

/**
 * The slash commands a message box offers: the prompts of every enabled MCP server, asked
 * once per `/` typed. `query` is what follows the `/` (undefined: no command is being
 * typed). `active` and `move`/`choose` let the message box's keys drive the menu.
 */
export function useSlashCommands(query: string | undefined) {
  const backend = useBackend();
  const [catalog, setCatalog] = useState<McpPromptCatalog>();
  const [error, setError] = useState<ApiFailure>();
  const [active, setActive] = useState(0);
  const [chosen, setChosen] = useState<McpPrompt>();
  const typing = query !== undefined;
  useEffect(() => {
    if (!typing) return;
    let current = true;
    backend.call('mcp_prompts_list').then(
      (loaded) => {
        if (!current) return;
        setCatalog(loaded);
        setError(undefined);
      },
      (e: unknown) => current && setError(toApiFailure(e, 'The prompts could not be listed')),
    );
    return () => {
      current = false;
    };
  }, [backend, typing]);
  const needle = (query ?? '').toLowerCase();
  const matches = (catalog?.prompts ?? []).filter((p) => p.name.toLowerCase().includes(needle) || (p.title ?? '').toLowerCase().includes(needle));
  const index = Math.min(active, Math.max(0, matches.length - 1));
  return {
    open: typing && chosen === undefined,
    loading: typing && catalog === undefined && error === undefined,
    error,
    problems: catalog?.problems ?? [],
    matches,
    active: index,
    move: (delta: number) => setActive(matches.length === 0 ? 0 : (index + delta + matches.length) % matches.length),
    chosen,
    choose: (prompt: McpPrompt | undefined = matches[index]) => setChosen(prompt),
    reset: () => {
      setChosen(undefined);
      setActive(0);
    },
  };
}

export type SlashCommands = ReturnType<typeof useSlashCommands>;

/** The menu of slash commands, above the message box. */
export function SlashMenu({ commands }: { commands: SlashCommands }) {
  if (!commands.open) return null;
  return (
    <div className="slash-menu" data-testid="slash-menu" role="listbox" aria-label="Slash commands">
      {commands.error && <ErrorNotice error={commands.error} />}
      {commands.loading && (
        <p className="muted small" role="status">
          Asking the MCP servers for their prompts…
        </p>
      )}
      {commands.problems.map((problem) => (
        <p key={problem.serverId} className="small resource-problem">
          {problem.message}
        </p>
      ))}
      {!commands.loading && commands.matches.length === 0 && !commands.error && (
        <p className="muted small" data-testid="slash-none">
          No command matches. Slash commands are the prompts of your MCP servers (Settings → MCP).
        </p>
      )}
      <ul>
        {commands.matches.map((prompt, index) => (
          <SlashOption
            key={`${prompt.serverId} ${prompt.name}`}
            testId="slash-option"
            name={prompt.name}
            active={index === commands.active}
            onChoose={() => commands.choose(prompt)}
            hint={prompt.arguments.length > 0 && <span className="muted"> {prompt.arguments.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(' ')}</span>}
            detail={
              <span className="muted small">
                {prompt.serverName}
                {prompt.description ? ` · ${prompt.description}` : ''}
              </span>
            }
          />
        ))}
      </ul>
    </div>
  );
}

interface SlashOptionProps {
  testId: string;
  name: string;
  /** Highlighted: Enter or Tab chooses it. */
  active: boolean;
  onChoose: () => void;
  /** What the command takes, after its name. */
  hint?: ReactNode;
  /** A line about it under the name. */
  detail?: ReactNode;
}

/** One command of a slash menu (MCP prompts, an ACP agent's commands). */
export function SlashOption({ testId, name, active, onChoose, hint, detail }: SlashOptionProps) {
  return (
    <li>
      <button
        type="button"
        role="option"
        aria-selected={active}
        className={active ? 'active' : undefined}
        data-testid={testId}
        data-name={name}
        // Keeps the focus in the message box.
        onMouseDown={(event) => event.preventDefault()}
        onClick={onChoose}
      >
        <span>
          /{name}
          {hint}
        </span>
        {detail}
      </button>
    </li>
  );
}

/**
 * A chosen prompt: its arguments as a small form (values the server suggests offered as
 * you type), then run; its messages replace the message being written. A prompt without
 * arguments runs at once.
 */
export function PromptRunner({ prompt, onExpand, onCancel }: { prompt: McpPrompt; onExpand: (expansion: Expansion) => void; onCancel: () => void }) {
  const backend = useBackend();
  const [values, setValues] = useState<Record<string, string>>({});
  const [suggestions, setSuggestions] = useState<Record<string, string[]>>({});
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<ApiFailure>();
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const asked = useRef(0);

  const run = (arguments_: Record<string, string>) => {
    setRunning(true);
    setError(undefined);
    const request: McpPromptGetRequest = { serverId: prompt.serverId, name: prompt.name, arguments: arguments_ };
    backend.call('mcp_prompt_get', request).then(
      (expansion: McpPromptExpansion) =>
        onExpand({
          text: expansion.text,
          resources: expansion.resources.map((r) => ({ serverId: r.serverId, serverName: r.serverName, uri: r.uri, label: resourceLabel(r.uri) })),
        }),
      (e: unknown) => {
        setRunning(false);
        setError(toApiFailure(e, `The prompt ${prompt.name} could not be run`));
      },
    );
  };

  const noArguments = prompt.arguments.length === 0;
  const ranAtOnce = useRef(false);
  useEffect(() => {
    if (!noArguments || ranAtOnce.current) return;
    ranAtOnce.current = true;
    run({});
    // Once, when a prompt without arguments is chosen.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [noArguments]);
  useEffect(() => () => clearTimeout(timer.current), []);

  const complete = (argument: string, value: string, all: Record<string, string>) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      const ask = ++asked.current;
      const context = Object.fromEntries(Object.entries(all).filter(([name, v]) => name !== argument && v !== ''));
      const request: McpCompleteRequest = { serverId: prompt.serverId, prompt: prompt.name, argument, value, context };
      backend.call('mcp_prompt_complete', request).then(
        (completion) => {
          if (ask === asked.current) setSuggestions((s) => ({ ...s, [argument]: completion.values }));
        },
        // Suggestions are a help: without them the field still takes any value.
        () => undefined,
      );
    }, COMPLETE_AFTER_MS);
  };

  const missing = prompt.arguments.filter((a) => a.required && (values[a.name] ?? '').trim() === '').map((a) => a.name);
  const submit = () => {
    if (missing.length > 0 || running) return;
    run(Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== '')));
  };
  // Not a <form>: it sits inside the message box's form; Enter here runs the prompt, Escape cancels.
  return (
    <div
      className="prompt-runner"
      role="group"
      aria-label={`Arguments of /${prompt.name}`}
      data-testid="prompt-form"
      data-name={prompt.name}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          event.stopPropagation();
          onCancel();
        } else if (event.key === 'Enter') {
          event.preventDefault();
          submit();
        }
      }}
    >
      <p className="small">
        <strong>/{prompt.name}</strong> <span className="muted">({prompt.serverName})</span>
        {prompt.description && <span className="muted"> — {prompt.description}</span>}
      </p>
      {prompt.arguments.map((argument, index) => {
        const listId = `prompt-${prompt.serverId}-${prompt.name}-${argument.name}`;
        return (
          <label key={argument.name} className="field small">
            <span>
              {argument.title ?? argument.name}
              {argument.required ? ' *' : ''}
              {argument.description && <span className="muted"> — {argument.description}</span>}
            </span>
            <input
              data-testid="prompt-argument"
              data-name={argument.name}
              list={listId}
              autoFocus={index === 0}
              value={values[argument.name] ?? ''}
              onFocus={() => complete(argument.name, values[argument.name] ?? '', values)}
              onChange={(event) => {
                const next = { ...values, [argument.name]: event.target.value };
                setValues(next);
                complete(argument.name, event.target.value, next);
              }}
            />
            <datalist id={listId} data-testid="prompt-suggestions" data-name={argument.name}>
              {(suggestions[argument.name] ?? []).map((value) => (
                <option key={value} value={value} />
              ))}
            </datalist>
          </label>
        );
      })}
      {error && <ErrorNotice error={error} />}
      {running && noArguments && (
        <p className="muted small" role="status">
          Running /{prompt.name}…
        </p>
      )}
      <div className="resource-template-actions">
        <button type="button" className="button small" data-testid="prompt-cancel" onClick={onCancel}>
          Cancel
        </button>
        {!noArguments && (
          <button
            type="button"
            className="button primary small"
            data-testid="prompt-run"
            disabled={missing.length > 0 || running}
            title={missing.length > 0 ? `Fill in ${missing.join(', ')}` : undefined}
            onClick={submit}
          >
            {running ? 'Running…' : 'Insert'}
          </button>
        )}
      </div>
    </div>
  );
}
