import { useState } from 'react';
import { checkAttachments, type PendingFile } from '../chat/attachments';

let fileCounter = 0;

/** A file to send, with a fresh id for its chip. */
export function pendingFile(file: File, mediaType: string): PendingFile {
  return { id: `file-${++fileCounter}`, file, mediaType };
}

/**
 * The files that go with a message being written (the composer) or edited: added ones
 * are checked against the backend's limits, and what did not fit is explained.
 */
export function usePendingFiles(initial: () => PendingFile[] = () => []) {
  const [files, setFiles] = useState<PendingFile[]>(initial);
  const [problems, setProblems] = useState<string[]>([]);
  const addFiles = (incoming: File[]) => {
    if (incoming.length === 0) return;
    const checked = checkAttachments(files.map((pending) => pending.file), incoming);
    setProblems(checked.problems);
    if (checked.accepted.length === 0) return;
    setFiles([...files, ...checked.accepted.map(({ file, mediaType }) => pendingFile(file, mediaType))]);
  };
  const remove = (id: string) => setFiles(files.filter((pending) => pending.id !== id));
  return { files, setFiles, problems, setProblems, addFiles, remove };
}
