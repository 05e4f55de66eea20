import type { Backend } from '../backend/backend';
import { isTauri } from '../backend/ipc';
import type { ExportedFile } from '../protocol.gen';

/**
 * Hands an exported file to the user. In a browser: a normal download. In the desktop
 * window: the backend writes it into the Downloads folder (`file_save`), because
 * WebKitGTK may ignore `a[download]` of a blob. Resolves with what to tell the user.
 */
export async function deliverFile(backend: Backend, file: ExportedFile): Promise<string> {
  if (isTauri()) {
    const saved = await backend.call('file_save', { fileName: file.fileName, content: file.content });
    return `Saved to ${saved.path}`;
  }
  const blob = new Blob([file.content], { type: `${file.mediaType};charset=utf-8` });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = file.fileName;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the URL by now; keep it a moment for slow browsers.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return `Downloaded ${file.fileName}`;
}
