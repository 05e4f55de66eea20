import { useState, type ComponentProps } from 'react';
import { isApiError } from '../backend/backend';
import type { ImageFetchRequest } from '../protocol.gen';
import { useBackend } from './BackendContext';

type ImageProps = ComponentProps<'img'> & { node?: unknown };

/**
 * An image in a reply. The app's own files and `data:`/`blob:` URLs show at once; a
 * remote image shows only after the user clicks "Load image from <host>", and then
 * through the backend (`image_fetch`): the page's CSP allows no remote image, because
 * a reply could otherwise send data to any host in an image URL, without a click.
 */
export function MarkdownImage({ src, alt, title }: ImageProps) {
  const url = typeof src === 'string' ? src : '';
  if (url !== '' && isLocalImage(url)) return <img src={url} alt={alt} title={title} />;
  const host = remoteHost(url);
  if (host === null) {
    return (
      <span className="markdown-image-blocked muted" data-testid="markdown-image-blocked">
        {alt !== undefined && alt !== '' ? `[image: ${alt}]` : '[image]'}
      </span>
    );
  }
  return <RemoteImage url={url} host={host} alt={alt} title={title} />;
}

type RemoteState = { kind: 'idle' } | { kind: 'loading' } | { kind: 'loaded'; dataUrl: string } | { kind: 'failed'; message: string };

function RemoteImage({ url, host, alt, title }: { url: string; host: string; alt: string | undefined; title: string | undefined }) {
  const backend = useBackend();
  const [state, setState] = useState<RemoteState>({ kind: 'idle' });
  if (state.kind === 'loaded') {
    return <img src={state.dataUrl} alt={alt} title={title ?? url} data-testid="markdown-image" />;
  }
  const load = () => {
    setState({ kind: 'loading' });
    backend
      .call('image_fetch', { url } satisfies ImageFetchRequest)
      .then((image) => setState({ kind: 'loaded', dataUrl: image.dataUrl }))
      .catch((error: unknown) => setState({ kind: 'failed', message: isApiError(error) ? error.message : String(error) }));
  };
  return (
    <span className="markdown-image-remote" data-testid="markdown-image-remote">
      <button type="button" className="small" data-testid="markdown-image-load" disabled={state.kind === 'loading'} onClick={load} title={url}>
        {state.kind === 'loading' ? `Loading image from ${host}…` : `Load image from ${host}`}
      </button>
      {alt !== undefined && alt !== '' ? <span className="muted small"> {alt}</span> : null}
      {state.kind === 'failed' ? (
        <span className="error small" data-testid="markdown-image-error">
          {' '}
          Could not load it: {state.message}
        </span>
      ) : null}
    </span>
  );
}

/** Whether the page may show `src` as it is: its own files, `data:` and `blob:` URLs. */
export function isLocalImage(src: string): boolean {
  const base = typeof window === 'undefined' ? undefined : window.location.href;
  try {
    const url = base === undefined ? new URL(src) : new URL(src, base);
    if (url.protocol === 'data:' || url.protocol === 'blob:') return true;
    return base !== undefined && url.origin === new URL(base).origin;
  } catch {
    return false;
  }
}

/** The host of an `http(s)` image URL, shown on the button; `null` for anything else. */
export function remoteHost(src: string): string | null {
  try {
    const url = new URL(src);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : null;
  } catch {
    return null;
  }
}
