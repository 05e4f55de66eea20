import { useState } from 'react';
import { formatSize } from '../chat/attachments';
import { base64Size, resourceLabel, type PendingResource } from '../chat/mcpContent';
import type { ResourceAttachment, ResourceContent } from '../protocol.gen';
import { FileIcon } from './Icons';
import { Markdown } from './LazyMarkdown';

/** The resources that go with the next message, each removable. */
export function PendingResourceChips({ resources, disabled, onRemove }: { resources: readonly PendingResource[]; disabled?: boolean | undefined; onRemove: (uri: string) => void }) {
  if (resources.length === 0) return null;
  return (
    <ul className="attachment-chips" aria-label="Resources to send">
      {resources.map((resource) => (
        <li key={`${resource.serverId} ${resource.uri}`} className="attachment-chip resource-chip" data-testid="pending-resource" data-uri={resource.uri} title={`${resource.uri} (${resource.serverName}); read when the message is sent`}>
          <FileIcon />
          <span className="attachment-name">{resource.label}</span>
          <span className="attachment-size">{resource.serverName}</span>
          <button type="button" className="icon-button" aria-label={`Remove ${resource.label}`} title="Remove" disabled={disabled} onClick={() => onRemove(resource.uri)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The resources attached to a sent message: a chip each (its server, and whether it was read again after a change); a click shows what was read. */
export function MessageResources({ resources }: { resources: readonly ResourceAttachment[] }) {
  const [open, setOpen] = useState<number>();
  if (resources.length === 0) return null;
  const shown = open === undefined ? undefined : resources[open];
  return (
    <div className="message-resources">
      <ul className="attachment-chips" aria-label="Attached resources">
        {resources.map((resource, index) => (
          <li key={index}>
            <button
              type="button"
              className="attachment-chip resource-chip"
              data-testid="message-resource"
              data-uri={resource.uri}
              data-updated={resource.updated ? 'true' : undefined}
              aria-expanded={open === index}
              title={`${resource.uri} from ${resource.serverName}${resource.updated ? ' — read again: the server said it changed' : ''}`}
              onClick={() => setOpen(open === index ? undefined : index)}
            >
              <FileIcon />
              <span className="attachment-name">{resourceLabel(resource.uri)}</span>
              <span className="attachment-size">
                {resource.serverName}
                {resource.updated ? ' · updated' : ''}
              </span>
            </button>
          </li>
        ))}
      </ul>
      {shown && <ResourceContents resource={shown} />}
    </div>
  );
}

/** What a resource read returned: text (markdown as markdown), images, other data named with its size. */
export function ResourceContents({ resource }: { resource: ResourceAttachment }) {
  if (resource.contents.length === 0) {
    return <p className="muted small">The contents are read when the message is sent.</p>;
  }
  return (
    <div className="resource-contents" data-testid="resource-contents">
      {resource.contents.map((content, index) => (
        <ContentView key={index} content={content} />
      ))}
    </div>
  );
}

function ContentView({ content }: { content: ResourceContent }) {
  const mime = content.mimeType ?? '';
  if (content.type === 'text') {
    if (mime === 'text/markdown') return (
      <div className="resource-markdown">
        <Markdown text={content.text} live={false} animating={false} />
      </div>
    );
    return <pre className="tool-output-text">{content.text}</pre>;
  }
  if (mime.startsWith('image/')) {
    return <img className="tool-output-image" src={`data:${mime};base64,${content.blob}`} alt={resourceLabel(content.uri)} />;
  }
  return (
    <p className="muted small">
      {formatSize(base64Size(content.blob))} of {mime || 'binary data'} ({content.uri})
    </p>
  );
}
