import { useState } from 'react';
import { matchingCommands, type AgentCommand } from '../chat/agentSession';
import { SlashOption } from './SlashCommands';

/**
 * The slash commands an ACP agent offers, for the message box: `query` is what follows a
 * `/` typed at the start (undefined: no command is being typed). Choosing one puts
 * `/name ` in the message, which goes to the agent as plain text.
 */
export function useAgentCommandMenu(commands: readonly AgentCommand[] | undefined, query: string | undefined) {
  const [active, setActive] = useState(0);
  const matches = commands && query !== undefined ? matchingCommands(commands, query) : [];
  const index = Math.min(active, Math.max(0, matches.length - 1));
  return {
    open: commands !== undefined && commands.length > 0 && query !== undefined,
    matches,
    active: index,
    move: (delta: number) => setActive(matches.length === 0 ? 0 : (index + delta + matches.length) % matches.length),
    /** The command to put in the message (the highlighted one by default). */
    chosen: (command: AgentCommand | undefined = matches[index]) => {
      setActive(0);
      return command;
    },
  };
}

export type AgentCommandMenuState = ReturnType<typeof useAgentCommandMenu>;

/** The agent's commands matching what is typed, with what each does and what it takes. */
export function AgentCommandMenu({ menu, onChoose }: { menu: AgentCommandMenuState; onChoose: (command: AgentCommand) => void }) {
  if (!menu.open) return null;
  return (
    <div className="slash-menu" data-testid="agent-command-menu" role="listbox" aria-label="The agent's commands">
      {menu.matches.length === 0 && (
        <p className="muted small" data-testid="agent-command-none">
          The agent offers no command by that name.
        </p>
      )}
      <ul>
        {menu.matches.map((command, index) => (
          <SlashOption
            key={command.name}
            testId="agent-command-option"
            name={command.name}
            active={index === menu.active}
            onChoose={() => onChoose(command)}
            hint={command.hint && <span className="muted agent-command-hint"> {command.hint}</span>}
            detail={command.description && <span className="muted small">{command.description}</span>}
          />
        ))}
      </ul>
    </div>
  );
}
