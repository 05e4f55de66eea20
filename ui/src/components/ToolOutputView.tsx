import { prettyJson, toolOutput } from '../chat/tools';
import type { ToolContent } from '../protocol.gen';

/**
 * What a tool returned: text, images inline, resources as links (or their text). Output
 * of another shape is shown as JSON.
 */
export function ToolOutputView({ output }: { output: unknown }) {
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
        <ToolContentView key={index} item={item} />
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

function ToolContentView({ item }: { item: ToolContent }) {
  switch (item.type) {
    case 'text':
      return <pre className="tool-output-text">{item.text}</pre>;
    case 'image':
      return <img className="tool-output-image" src={`data:${item.mimeType};base64,${item.data}`} alt="Image returned by the tool" />;
    case 'resource': {
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
          {item.text !== undefined && <pre className="tool-output-text">{item.text}</pre>}
        </div>
      );
    }
  }
}
