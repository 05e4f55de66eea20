import { useState } from 'react';
import { ApiFailure, toApiFailure } from '../backend/backend';
import { serverOfTool } from '../chat/mcpContent';
import { prettyJson, toolOutput } from '../chat/tools';
import type { ContentAnnotations, McpResourceRef, ResourceAttachment, ToolContent } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { ResourceContents } from './ResourceViews';

/**
 * What a tool returned: text, images inline, resources as links (or their text). Output
 * of another shape is shown as JSON.
 */
export function ToolOutputView({ output, toolName }: { output: unknown; toolName?: string | undefined }) {
  const known = toolOutput(output);
  if (!known) {
    return (
      <pre className="tool-output-text" data-testid="tool-output">
        {prettyJson(output)}
      </pre>
    );
  }
  return (
    <div className={`tool-output${known.isError ? ' is-error' : ''}`} data-testid="tool-output">
      {known.content.map((item, index) => (
        <ToolContentView key={index} item={item} toolName={toolName} />
      ))}
      {known.content.length === 0 && known.structuredContent === undefined && <p className="muted small">No output.</p>}
      {known.structuredContent !== undefined && (
        <details className="tool-structured">
          <summary className="small">Structured result</summary>
          <pre className="tool-output-text">{prettyJson(known.structuredContent)}</pre>
        </details>
      )}
      {known.truncatedForModel && (
        <p className="tool-truncated small" data-testid="tool-truncated">
          This result was long: the model saw only the beginning.
        </p>
      )}
    </div>
  );
}

function ToolContentView({ item, toolName }: { item: ToolContent; toolName: string | undefined }) {
  switch (item.type) {
    case 'text':
      return <pre className="tool-output-text">{item.text}</pre>;
    case 'image':
      return <img className="tool-output-image" src={`data:${item.mimeType};base64,${item.data}`} alt="Image returned by the tool" />;
    case 'resource': {
      if (item.link) return <ResourceLinkView link={item} toolName={toolName} />;
      const web = /^https?:\/\//i.test(item.uri);
      return (
        <div className="tool-resource">
          {web ? (
            <a href={item.uri} target="_blank" rel="noreferrer">
              {item.uri}
            </a>
          ) : (
            <code>{item.uri}</code>
          )}
          {item.mimeType && <span className="muted small"> · {item.mimeType}</span>}
          <Annotations annotations={item.annotations} />
          {item.text !== undefined && <pre className="tool-output-text">{item.text}</pre>}
        </div>
      );
    }
  }
}

type ResourceItem = Extract<ToolContent, { type: 'resource' }>;

/** What the server says of a piece of content: for whom, how important, when changed. */
function Annotations({ annotations }: { annotations: ContentAnnotations | undefined }) {
  if (!annotations) return null;
  const said = [
    annotations.audience && annotations.audience.length > 0 ? `for ${annotations.audience.join(' and ')}` : undefined,
    annotations.priority !== undefined ? `priority ${annotations.priority}` : undefined,
    annotations.lastModified ? `changed ${annotations.lastModified}` : undefined,
  ].filter(Boolean);
  return <span className="muted small" data-testid="content-annotations"> · {said.join(' · ')}</span>;
}

/**
 * A link to a resource of the tool's MCP server: its name, URI and what the server says of
 * it; Open reads it through that server and shows what came back.
 */
function ResourceLinkView({ link, toolName }: { link: ResourceItem; toolName: string | undefined }) {
  const backend = useBackend();
  const [read, setRead] = useState<ResourceAttachment>();
  const [error, setError] = useState<ApiFailure>();
  const [opening, setOpening] = useState(false);
  const open = async () => {
    if (read) {
      setRead(undefined);
      return;
    }
    setOpening(true);
    setError(undefined);
    try {
      const servers = await backend.call('mcp_servers_list');
      const server = toolName ? serverOfTool(toolName, servers) : undefined;
      if (!server) {
        setError(new ApiFailure({ kind: 'not_found', message: 'The MCP server that returned this link is no longer configured, so it cannot be read.', retryable: false }));
        return;
      }
      const request: McpResourceRef = { serverId: server.id, uri: link.uri };
      setRead(await backend.call('mcp_resource_read', request));
    } catch (e) {
      setError(toApiFailure(e, `${link.uri} could not be read`));
    } finally {
      setOpening(false);
    }
  };
  return (
    <div className="tool-resource resource-link" data-testid="resource-link" data-uri={link.uri}>
      <div>
        {link.name && <strong>{link.name} </strong>}
        <code>{link.uri}</code>
        {link.mimeType && <span className="muted small"> · {link.mimeType}</span>}
        <Annotations annotations={link.annotations} />
        <button type="button" className="button ghost small" data-testid="resource-link-open" disabled={opening || !toolName} aria-expanded={read !== undefined} onClick={() => void open()}>
          {opening ? 'Opening…' : read ? 'Close' : 'Open'}
        </button>
      </div>
      {link.text !== undefined && link.text !== link.name && <p className="muted small">{link.text}</p>}
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
      {read && <ResourceContents resource={read} />}
    </div>
  );
}
