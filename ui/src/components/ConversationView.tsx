import { useDeferredValue, useEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { isAgentTopic } from '../agents/sessions';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import { agentState, type AgentState } from '../chat/agentSession';
import { encodeAttachment } from '../chat/attachments';
import type { ConversationFeatures } from '../chat/features';
import { InboxStore, steerTiming, type AgentSteering } from '../chat/inbox';
import { focusIsFree, useShortcuts } from '../keyboard/keyHandler';
import { TopicSession } from '../chat/session';
import type { ModelRef, PathVersion, Provider, Topic, TopicStatus } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { Composer, type OutgoingMessage } from './Composer';
import { EditRequestContext, type EditRequest } from './EditRequestContext';
import { ErrorNotice } from './ErrorNotice';
import { InboxList } from './InboxList';
import { loadMarkdownAfterPaint } from './LazyMarkdown';
import { MessageList } from './MessageList';
import type { ReplyCommands, TreeCommands } from './Turn';

interface ConversationViewProps {
  /** A chat topic's id, or an agent session's `agent-session:<id>`. */
  topicId: string;
  /** The header above the messages (title, folder, settings). */
  header: ReactNode;
  providers: Provider[];
  /** The topic's status from the window's status feed. */
  status: TopicStatus | undefined;
  features: ConversationFeatures;
  /** The models the next message goes to (none: the conversation's own, e.g. an agent's). */
  models: ModelRef[];
  /** The composer's model picker, when the conversation offers one (`features.pickModels`). */
  modelPicker?: ReactNode;
  /** Models picked in this window that differ from the topic's standing choice: a queued message keeps them. */
  pickedModels?: ModelRef[] | undefined;
  /** A message was sent, queued or steered from this window. */
  onMessageSent?: (() => void) | undefined;
  /** Who messages go to, for the composer's placeholder. */
  addressee?: string | undefined;
  /** The history was read again (a reply ended): what depends on it may have changed. */
  onSettled?: (() => void) | undefined;
  /**
   * The topic's last path change as the status feed knows it (`topicPath`): when newer
   * than what was read, the history is read again.
   */
  pathVersion?: PathVersion | undefined;
  /** "Fork from here" made this topic: open it. */
  onForked?: ((topic: Topic) => void) | undefined;
  /** Changes whenever a turn started in the topic (the status feed's count). */
  turnStarts?: number | undefined;
  /** An agent session's: how its agent takes a steering message. */
  agentSteering?: AgentSteering | undefined;
  /**
   * An ACP session's: its agent's commands are offered after `/`, and these controls (its
   * mode) go in the composer's bar, from what its replies last said.
   */
  agentTools?: ((agent: AgentState) => ReactNode) | undefined;
}

/**
 * One open conversation — a chat topic or an agent session, which is a topic too — with
 * its messages, live replies, inbox and composer. Keyed by topic id by its parent.
 */
export function ConversationView(props: ConversationViewProps) {
  const { topicId, header, providers, status, features, models, modelPicker, pickedModels, onMessageSent, addressee, onSettled, pathVersion, onForked, agentSteering, agentTools, turnStarts } = props;
  const backend = useBackend();
  // `onSettled` is stable in the parent; the session keeps the first one.
  const [session] = useState(() => new TopicSession(backend, topicId, { onSettled }));
  const [inbox] = useState(() => new InboxStore(backend, topicId));
  const state = useSyncExternalStore(session.subscribe, session.getState);
  // The conversation is drawn from a deferred copy: a store's updates render synchronously,
  // in one task, and a long reply's render (its markdown, a code block highlighted) then
  // blocked the page for 50-170 ms; deferred, React renders it in slices between frames
  // and input, and drops a render that a newer chunk made stale.
  const shown = useDeferredValue(state);
  const [unsent, setUnsent] = useState<OutgoingMessage>();
  const [fileError, setFileError] = useState<ApiFailure>();
  const awaitingApproval = status === 'awaiting_approval';
  const composer = useRef<HTMLTextAreaElement>(null);
  const [editRequest, setEditRequest] = useState<EditRequest>();

  useShortcuts({
    'focus-composer': () => {
      const input = composer.current;
      if (!input || input.disabled) return false;
      input.focus();
      return true;
    },
    'stop-reply': () => {
      if (!state.running || state.stopping) return false;
      void session.stop();
      return true;
    },
    'edit-last': () => {
      const last = features.tree ? state.turns.findLast((turn) => turn.user && !turn.unsaved)?.user : undefined;
      if (!last) return false;
      setEditRequest({ messageId: last.id, done: () => composer.current?.focus() });
      return true;
    },
  });

  useEffect(() => {
    session.open();
    return () => session.close();
  }, [session]);

  useEffect(() => {
    // A turn started or ended (here or in another window): follow it, and the inbox
    // changes with it (an item ran, or was held after a failure).
    session.setStatus(status);
    void inbox.followStatus(status);
  }, [session, inbox, status]);

  // Opening a topic is opening it to write in: its message box takes the focus once
  // shown, unless the user went on to something else meanwhile (the search box).
  const focusedOnOpen = useRef(false);
  useEffect(() => {
    if (!state.loaded || focusedOnOpen.current) return;
    focusedOnOpen.current = true;
    if (focusIsFree()) composer.current?.focus();
  }, [state.loaded]);

  // Once the conversation is on screen, the markdown renderer loads (its texts mounted
  // meanwhile ask for it too): a reply sent in a new topic streams as markdown.
  useEffect(() => (state.loaded ? loadMarkdownAfterPaint() : undefined), [state.loaded]);

  const pathEpoch = pathVersion?.epoch;
  const pathChange = pathVersion?.version;
  useEffect(() => {
    session.followPath(pathEpoch === undefined || pathChange === undefined ? undefined : { epoch: pathEpoch, version: pathChange });
  }, [session, pathEpoch, pathChange]);

  const firstStarts = useRef(turnStarts);
  useEffect(() => {
    if (turnStarts !== firstStarts.current) session.turnStarted();
  }, [session, turnStarts]);

  const commands = useMemo<ReplyCommands>(() => {
    const tree: TreeCommands = {
      selectVersion: (messageId) => session.selectVersion(messageId),
      deleteMessage: (messageId) => session.deleteMessage(messageId),
      fork: async (messageId) => {
        const forked = await session.fork(messageId);
        if ('error' in forked) return forked.error;
        onForked?.(forked.topic);
        return undefined;
      },
      edit: async (messageId, message) => {
        setFileError(undefined);
        let attachments;
        try {
          attachments = await Promise.all(message.files.map(encodeAttachment));
        } catch (error) {
          setFileError(toApiFailure(error, 'A file could not be read'));
          return false;
        }
        const { unsent } = await session.edit(messageId, message.text, attachments);
        return unsent === undefined;
      },
    };
    return {
      retry: features.retry ? (messageId) => session.retry(messageId) : undefined,
      stopReply: (messageId) => session.stopReply(messageId),
      continueReply: (messageId) => session.continueReply(messageId),
      addModel: features.addModel ? (turnId, model) => session.addModel(turnId, model) : undefined,
      tree: features.tree ? tree : undefined,
      attachments: features.attachments,
    };
  }, [session, features, onForked]);

  const agent = useMemo(() => (agentTools ? agentState(state.turns) : undefined), [agentTools, state.turns]);
  const steer = steerTiming(state.turns, isAgentTopic(topicId) ? (agentSteering ?? 'mid-turn') : undefined);

  const toInbox = (mode: 'queue' | 'steer') => (text: string) => {
    onMessageSent?.();
    // A queued message keeps this window's pick, as a sent one would.
    void inbox.add(text, mode, pickedModels).then((added) => {
      if (!added) setUnsent({ text, files: [] });
    });
  };
  /** Sends (or interrupts with) a message; whatever could not be sent goes back into the composer. */
  const deliver = (how: 'send' | 'interrupt') => (message: OutgoingMessage) => {
    onMessageSent?.();
    setFileError(undefined);
    void (async () => {
      let attachments;
      try {
        attachments = await Promise.all(message.files.map(encodeAttachment));
      } catch (error) {
        setFileError(toApiFailure(error, 'A file could not be read'));
        setUnsent(message);
        return;
      }
      const run = how === 'send' ? session.send.bind(session) : session.interrupt.bind(session);
      const resources = (message.resources ?? []).map(({ serverId, uri }) => ({ serverId, uri }));
      const { unsent } = await run(message.text, models, attachments, resources);
      if (unsent !== undefined) setUnsent(message);
    })();
  };

  return (
    <section className="chat">
      {header}
      {shown.loaded ? (
        <EditRequestContext.Provider value={editRequest}>
          <MessageList
            turns={shown.turns}
            waiting={shown.sending}
            providers={providers}
            commands={commands}
            hasOlder={shown.hasOlder}
            loadingOlder={shown.loadingOlder}
            onLoadOlder={session.loadOlder}
          />
        </EditRequestContext.Provider>
      ) : state.loadError ? (
        <div className="chat-status">
          <ErrorNotice error={state.loadError} onRetry={() => session.reload()} />
        </div>
      ) : (
        <div className="chat-status muted" role="status">
          Loading messages…
        </div>
      )}
      <div className="chat-footer">
        {state.error && (
          <ErrorNotice
            error={state.error}
            hint={
              state.error.kind === 'conflict' && awaitingApproval
                ? 'Answer the tool call waiting above (or press Stop to deny it), then send your message again.'
                : undefined
            }
            onDismiss={() => session.dismissError()}
          />
        )}
        {fileError && <ErrorNotice error={fileError} onDismiss={() => setFileError(undefined)} />}
        <InboxList store={inbox} steer={state.running ? steer : undefined} />
        {state.loaded && (
          <Composer
            busy={state.running}
            stopping={state.stopping}
            awaitingApproval={awaitingApproval}
            restored={unsent}
            attachments={features.attachments}
            mcpContent={features.attachments && !isAgentTopic(topicId)}
            addressee={addressee}
            providers={providers}
            models={models}
            modelPicker={features.pickModels ? modelPicker : undefined}
            steer={steer}
            tools={agent && agentTools?.(agent)}
            agentCommands={agent?.commands}
            onSend={deliver('send')}
            onQueue={toInbox('queue')}
            onSteer={toInbox('steer')}
            onInterrupt={deliver('interrupt')}
            onStop={() => void session.stop()}
            inputRef={composer}
          />
        )}
      </div>
    </section>
  );
}
