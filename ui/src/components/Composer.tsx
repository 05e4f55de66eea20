import { useState, type ClipboardEvent, type DragEvent, type KeyboardEvent, type ReactNode, type Ref } from 'react';
import type { PendingFile } from '../chat/attachments';
import { QUEUE_EXPLANATION, steerExplanation, type SteerTiming } from '../chat/inbox';
import { slashQuery, type PendingResource } from '../chat/mcpContent';
import { visionWarning } from '../chat/vision';
import { isShortcut } from '../keyboard/shortcuts';
import type { ModelRef, Provider } from '../protocol.gen';
import type { AgentCommand } from '../chat/agentSession';
import { AgentCommandMenu, useAgentCommandMenu } from './AgentCommandMenu';
import { AttachButton } from './AttachButton';
import { AttachmentChips, AttachmentProblems } from './AttachmentChips';
import { ResourcePicker } from './ResourcePicker';
import { PendingResourceChips } from './ResourceViews';
import { PromptRunner, SlashMenu, useSlashCommands, type Expansion } from './SlashCommands';
import { usePendingFiles } from './usePendingFiles';

/** A message as the composer hands it over: text, the files and the MCP resources picked for it. */
export interface OutgoingMessage {
  text: string;
  files: PendingFile[];
  resources?: PendingResource[];
}

interface ComposerProps {
  /** A turn is running in this topic: messages go to the inbox (or interrupt it). */
  busy: boolean;
  stopping: boolean;
  /** The topic's reply waits for the user to answer a tool call. */
  awaitingApproval?: boolean;
  disabled?: boolean;
  /** A message put back after it could not be sent or queued. */
  restored?: OutgoingMessage | undefined;
  /** Files can go with a message (not in a Claude Code session). Default: yes. */
  attachments?: boolean;
  /** MCP prompts after `/` and MCP resources to attach (a chat). Default: as `attachments`. */
  mcpContent?: boolean;
  /** Who the message goes to, for the placeholder (default: Colloquy). */
  addressee?: string;
  providers: Provider[];
  /** The models the next message goes to (none: the conversation's own, e.g. an agent's). */
  models: ModelRef[];
  /** The model picker; absent: no model choice (an agent session keeps its model). */
  modelPicker?: ReactNode;
  /** More controls for the bar (an agent's mode). */
  tools?: ReactNode;
  /** The slash commands an agent offers (an ACP session), suggested after `/`. */
  agentCommands?: readonly AgentCommand[] | undefined;
  /** When Steer can take effect in the live reply (default: at its next step). */
  steer?: SteerTiming | undefined;
  onSend: (message: OutgoingMessage) => void;
  onQueue: (text: string) => void;
  onSteer: (text: string) => void;
  onInterrupt: (message: OutgoingMessage) => void;
  onStop: () => void;
  /** The text area, for the keyboard shortcut that focuses it. */
  inputRef?: Ref<HTMLTextAreaElement> | undefined;
}

/**
 * The message box. Idle: Enter sends. While a reply is written: Enter queues the
 * message to run next; Steer makes the reply yield to it at its next step (a reply that
 * calls no tool has none: it says so); Interrupt stops the reply now and sends it.
 * Shift+Enter adds a line. Files come with the attach button, a paste or a drop; they are
 * checked against the backend's limits here, and images going to a model that cannot see
 * them are warned about.
 */
export function Composer(props: ComposerProps) {
  const { busy, stopping, awaitingApproval, disabled, restored, providers, models, modelPicker, onStop, inputRef } = props;
  const steerTiming = props.steer ?? 'next-step';
  const attachments = props.attachments ?? true;
  const addressee = props.addressee ?? 'Colloquy';
  const [text, setText] = useState('');
  const { files, setFiles, problems, setProblems, addFiles, remove } = usePendingFiles();
  const [resources, setResources] = useState<PendingResource[]>([]);
  const [dragging, setDragging] = useState(false);
  const [shownRestore, setShownRestore] = useState(restored);
  if (restored !== shownRestore) {
    // Adjusting state to a changed prop during render, as React recommends over an effect.
    setShownRestore(restored);
    if (restored && !text && files.length === 0 && resources.length === 0) {
      setText(restored.text);
      setFiles(restored.files);
      setResources(restored.resources ?? []);
    }
  }
  // Slash commands (MCP prompts) where messages may carry resources: a chat, not an agent session.
  const mcpContent = props.mcpContent ?? attachments;
  const commands = useSlashCommands(mcpContent && !busy ? slashQuery(text) : undefined);
  // An agent's own commands, which it takes as plain text.
  const agentMenu = useAgentCommandMenu(props.agentCommands, props.agentCommands ? slashQuery(text) : undefined);
  const insertAgentCommand = (command: AgentCommand | undefined) => {
    if (command) setText(`/${command.name} `);
  };
  const addResource = (resource: PendingResource) =>
    setResources((now) => (now.some((r) => r.serverId === resource.serverId && r.uri === resource.uri) ? now : [...now, resource]));
  const expand = (expansion: Expansion) => {
    setText(expansion.text);
    expansion.resources.forEach(addResource);
    commands.reset();
  };

  const hasFiles = files.length > 0 || resources.length > 0;
  const empty = text.trim() === '' && !hasFiles;
  const images = files.filter((pending) => pending.mediaType.startsWith('image/')).map((pending) => pending.file.name || 'an image');
  const blindWarning = visionWarning(models, providers, images);

  /** Text-only actions (the inbox keeps no files). */
  const submitText = (action: (text: string) => void) => {
    const value = text.trim();
    if (!value || disabled || hasFiles) return;
    action(value);
    setText('');
  };
  const submitMessage = (action: (message: OutgoingMessage) => void) => {
    if (empty || disabled) return;
    action({ text: text.trim(), files, resources });
    setText('');
    setFiles([]);
    setResources([]);
    setProblems([]);
  };
  const primary = () => (busy ? submitText(props.onQueue) : submitMessage(props.onSend));

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (agentMenu.open && agentMenu.matches.length > 0) {
      const move = event.key === 'ArrowDown' ? 1 : event.key === 'ArrowUp' ? -1 : 0;
      if (move !== 0) {
        event.preventDefault();
        agentMenu.move(move);
        return;
      }
      if (event.key === 'Tab' || isShortcut('send', event.nativeEvent)) {
        event.preventDefault();
        insertAgentCommand(agentMenu.chosen());
        return;
      }
    }
    if (commands.open && commands.loading && isShortcut('send', event.nativeEvent)) {
      // The commands are on their way: Enter picks one once they are shown, not sends `/…`.
      event.preventDefault();
      return;
    }
    if (commands.open && commands.matches.length > 0) {
      const move = event.key === 'ArrowDown' ? 1 : event.key === 'ArrowUp' ? -1 : 0;
      if (move !== 0) {
        event.preventDefault();
        commands.move(move);
        return;
      }
      if (event.key === 'Tab' || isShortcut('send', event.nativeEvent)) {
        event.preventDefault();
        commands.choose();
        return;
      }
    }
    if (isShortcut('send', event.nativeEvent)) {
      event.preventDefault();
      primary();
    }
  };
  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    const pasted = Array.from(event.clipboardData.files);
    if (pasted.length === 0 || !attachments) return;
    event.preventDefault();
    addFiles(pasted);
  };
  const carriesFiles = (event: DragEvent) => attachments && Array.from(event.dataTransfer.types).includes('Files');
  const onDragOver = (event: DragEvent<HTMLFormElement>) => {
    if (!carriesFiles(event) || disabled) return;
    event.preventDefault();
    setDragging(true);
  };
  const onDrop = (event: DragEvent<HTMLFormElement>) => {
    if (!carriesFiles(event) || disabled) return;
    event.preventDefault();
    setDragging(false);
    addFiles(Array.from(event.dataTransfer.files));
  };

  const noFilesHint = 'Files go with a new message: wait for the reply to finish, or Interrupt it to send them now';
  return (
    <form
      className={`composer${dragging ? ' dragging' : ''}`}
      onSubmit={(event) => {
        event.preventDefault();
        primary();
      }}
      onDragOver={onDragOver}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      {awaitingApproval && (
        <p className="composer-note" data-testid="composer-approval-note" role="status">
          A tool call is waiting for your approval above. Answer it to let the reply go on, or press Stop to deny it. A message
          you queue now is sent after the reply.
        </p>
      )}
      <AttachmentChips files={files} disabled={disabled} onRemove={remove} />
      <PendingResourceChips resources={resources} disabled={disabled} onRemove={(uri) => setResources((now) => now.filter((r) => r.uri !== uri))} />
      <SlashMenu commands={commands} />
      <AgentCommandMenu menu={agentMenu} onChoose={(command) => insertAgentCommand(agentMenu.chosen(command))} />
      {commands.chosen && <PromptRunner key={`${commands.chosen.serverId} ${commands.chosen.name}`} prompt={commands.chosen} onExpand={expand} onCancel={commands.reset} />}
      {blindWarning && (
        <p className="composer-note" data-testid="composer-vision-warning" role="status">
          {blindWarning}
        </p>
      )}
      <AttachmentProblems problems={problems} onDismiss={() => setProblems([])} />
      <textarea
        ref={inputRef}
        data-testid="composer-input"
        // The key handler tells the message box from other fields by this.
        data-composer
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
        placeholder={
          busy
            ? 'A reply is being written — Enter queues your message to run next, Shift+Enter for a new line'
            : attachments
              ? `Message ${addressee} — Enter to send, Shift+Enter for a new line; drop or paste files to attach them${mcpContent || (props.agentCommands?.length ?? 0) > 0 ? ', / for commands' : ''}`
              : `Message ${addressee} — Enter to send, Shift+Enter for a new line`
        }
        rows={1}
        aria-label="Message"
        disabled={disabled}
      />
      {busy && text.trim() !== '' && !hasFiles && (
        <p className="composer-hint small muted" data-testid="composer-steer-hint" data-steer={steerTiming}>
          {QUEUE_EXPLANATION} {steerExplanation(steerTiming)}
        </p>
      )}
      <div className="composer-bar">
        <div className="composer-tools">
          {attachments && <AttachButton disabled={disabled} onFiles={addFiles} />}
          {mcpContent && <ResourcePicker disabled={disabled} onPick={addResource} />}
          {modelPicker}
          {props.tools}
        </div>
        <div className="composer-actions">
          {busy ? (
            <>
              <button
                type="button"
                className="button small"
                data-testid="composer-interrupt"
                disabled={disabled || empty || stopping}
                title="Stop the reply now (its text is kept) and send this message"
                onClick={() => submitMessage(props.onInterrupt)}
              >
                Interrupt
              </button>
              <button
                type="button"
                className="button small"
                data-testid="composer-steer"
                disabled={disabled || text.trim() === '' || hasFiles}
                data-steer={steerTiming}
                title={hasFiles ? noFilesHint : steerExplanation(steerTiming)}
                onClick={() => submitText(props.onSteer)}
              >
                Steer
              </button>
              <button
                type="submit"
                className="button primary small"
                data-testid="composer-queue"
                disabled={disabled || text.trim() === '' || hasFiles}
                title={hasFiles ? noFilesHint : QUEUE_EXPLANATION}
              >
                Queue
              </button>
              <button
                type="button"
                className="button stop small"
                data-testid="stop-button"
                onClick={onStop}
                disabled={stopping}
                title={awaitingApproval ? 'Stop the reply: the tool calls waiting for you are denied' : 'Stop the reply; its text is kept'}
              >
                {stopping ? 'Stopping…' : 'Stop'}
              </button>
            </>
          ) : (
            <button type="submit" className="button primary" data-testid="send-button" disabled={disabled || empty}>
              Send
            </button>
          )}
        </div>
      </div>
    </form>
  );
}
