import { memo, useState } from 'react';
import type { ApiFailure } from '../backend/backend';
import type { ReplyView, TurnView } from '../chat/conversation';
import type { ModelRef, Provider } from '../protocol.gen';
import { AddModelButton } from './AddModelButton';
import type { BranchHandlers } from './BranchActions';
import type { OutgoingMessage } from './Composer';
import { ErrorNotice } from './ErrorNotice';
import { modelKey } from './ModelPicker';
import { Reply } from './Reply';
import { SideBySideReplies } from './SideBySideReplies';
import { UserMessage } from './UserMessage';

/**
 * What can be done to a reply or a turn; each resolves with the error to show, if any.
 * A conversation that cannot retry or add models (an agent session) leaves them out.
 */
export interface ReplyCommands {
  retry?: ((messageId: string) => Promise<ApiFailure | undefined>) | undefined;
  /** Stops one reply of a live turn; the turn's other replies go on. */
  stopReply(messageId: string): Promise<ApiFailure | undefined>;
  continueReply(messageId: string): Promise<ApiFailure | undefined>;
  addModel?: ((turnId: string, model: ModelRef) => Promise<ApiFailure | undefined>) | undefined;
  /** The history as a tree: absent where it stays one line (an agent session). */
  tree?: TreeCommands | undefined;
  /** Files can go with a message. */
  attachments: boolean;
}

/** Versions, edits, forks and deletes; each resolves with the error to show, if any. */
export interface TreeCommands {
  selectVersion(messageId: string): Promise<ApiFailure | undefined>;
  deleteMessage(messageId: string): Promise<ApiFailure | undefined>;
  fork(messageId: string): Promise<ApiFailure | undefined>;
  /** Sends a new version of a user message; resolves true once its turn started (errors show below the chat). */
  edit(messageId: string, message: OutgoingMessage): Promise<boolean>;
}

interface TurnProps {
  turn: TurnView;
  providers: Provider[];
  commands: ReplyCommands;
}

interface TurnFailure {
  error: ApiFailure;
  hint: string;
}

/**
 * A user message and its replies: one reply as is, several side by side. Errors of the
 * actions on this turn (retry, continue, add model, switch, fork, delete) are shown here, inline.
 */
export const Turn = memo(function Turn({ turn, providers, commands }: TurnProps) {
  const [failure, setFailure] = useState<TurnFailure>();

  const run = async (action: () => Promise<ApiFailure | undefined>, conflictHint: string) => {
    setFailure(undefined);
    const error = await action();
    if (error) setFailure({ error, hint: error.kind === 'conflict' ? conflictHint : '' });
  };
  const busyHint = 'A reply is still being written here: wait for it to finish, or stop it, then try again.';
  const { retry, addModel, tree } = commands;
  const onRetry = retry ? (messageId: string) => run(() => retry(messageId), busyHint) : undefined;
  const onContinue = (messageId: string) => run(() => commands.continueReply(messageId), busyHint);
  const onStop = (messageId: string) => run(() => commands.stopReply(messageId), '');
  // Retry every model of the turn: each retry joins the turn the first one starts.
  const onRetryAll = retry
    ? async () => {
        setFailure(undefined);
        for (const reply of turn.replies) {
          const error = await retry(reply.messageId);
          if (error) {
            setFailure({ error, hint: error.kind === 'conflict' ? busyHint : '' });
            return;
          }
        }
      }
    : undefined;
  const branch: BranchHandlers | undefined = tree && {
    select: (messageId) => run(() => tree.selectVersion(messageId), busyHint),
    fork: (messageId) => run(() => tree.fork(messageId), busyHint),
    remove: (messageId) =>
      run(() => tree.deleteMessage(messageId), 'A reply in what you delete is still being written: wait for it to finish, or stop it, then delete.'),
  };
  const userMessage = turn.user;
  const onEdit = tree && userMessage ? (message: OutgoingMessage) => tree.edit(userMessage.id, message) : undefined;
  const turnId = turn.turnId;
  const inTurn = turn.replies.flatMap((reply) => (reply.model ? [modelKey(reply.model)] : []));
  const onAddModel = (model: ModelRef) =>
    turnId === undefined || !addModel
      ? Promise.resolve()
      : run(
          () => addModel(turnId, model),
          inTurn.includes(modelKey(model)) ? 'That model already answers this message: pick another one.' : busyHint,
        );

  return (
    <div className="turn" data-turn-id={turnId}>
      {userMessage && (
        <UserMessage
          message={userMessage}
          versions={turn.userVersions}
          handlers={turn.unsaved ? undefined : branch}
          onEdit={turn.unsaved ? undefined : onEdit}
          attachments={commands.attachments}
        />
      )}
      {turn.replies.length === 1 && <Reply reply={turn.replies[0] as ReplyView} onRetry={onRetry} onContinue={onContinue} branch={branch} />}
      {turn.replies.length > 1 && (
        <SideBySideReplies
          replies={turn.replies}
          providers={providers}
          onRetry={onRetry}
          onRetryAll={onRetryAll}
          onStop={onStop}
          onContinue={onContinue}
          branch={branch}
        />
      )}
      {failure && (
        <ErrorNotice error={failure.error} hint={failure.hint || undefined} onDismiss={() => setFailure(undefined)} />
      )}
      {turnId !== undefined && addModel && turn.replies.length > 0 && (
        <AddModelButton providers={providers} taken={inTurn} onAdd={onAddModel} />
      )}
    </div>
  );
});
