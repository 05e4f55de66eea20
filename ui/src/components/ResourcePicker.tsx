import { useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import { fillTemplate, matchesSearch, resourceLabel, templateVariables, type PendingResource } from '../chat/mcpContent';
import type { McpResourceCatalog, McpResourceTemplate } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { usePopover } from './usePopover';

interface ResourcePickerProps {
  disabled?: boolean | undefined;
  onPick: (resource: PendingResource) => void;
}

/**
 * "Resource": attaches a resource of an MCP server to the next message. The panel lists
 * the resources and templates of every enabled server (asked when it opens), searchable;
 * a template is filled in through a small form. The backend reads the resource when the
 * message is sent.
 */
export function ResourcePicker({ disabled, onPick }: ResourcePickerProps) {
  const backend = useBackend();
  const { open, setOpen, ref, panelRef } = usePopover<HTMLDivElement>({ side: 'above' });
  const [catalog, setCatalog] = useState<McpResourceCatalog>();
  const [error, setError] = useState<ApiFailure>();
  const [query, setQuery] = useState('');
  const [template, setTemplate] = useState<McpResourceTemplate>();

  const load = () => {
    setError(undefined);
    setCatalog(undefined);
    backend.call('mcp_resources_list').then(setCatalog, (e: unknown) => setError(toApiFailure(e, 'The resources could not be listed')));
  };
  const toggle = () => {
    if (!open) {
      setQuery('');
      setTemplate(undefined);
      load();
    }
    setOpen(!open);
  };
  const pick = (resource: PendingResource) => {
    onPick(resource);
    setOpen(false);
  };

  const resources = catalog?.resources.filter((r) => matchesSearch(r, query)) ?? [];
  const templates = catalog?.templates.filter((t) => matchesSearch(t, query)) ?? [];
  return (
    <div className="resource-picker" ref={ref}>
      <button
        type="button"
        className="button ghost small"
        data-testid="resource-picker-button"
        aria-haspopup="dialog"
        aria-expanded={open}
        disabled={disabled}
        title="Attach a resource of an MCP server (read when the message is sent)"
        onClick={toggle}
      >
        @ Resource
      </button>
      {open && (
        <div className="popover-menu resource-panel" role="dialog" aria-label="Attach an MCP resource" ref={panelRef} data-testid="resource-picker">
          {template ? (
            <TemplateForm template={template} onBack={() => setTemplate(undefined)} onPick={pick} />
          ) : (
            <>
              <input
                type="search"
                className="resource-search"
                data-testid="resource-search"
                placeholder="Search resources by name, URI or server"
                aria-label="Search resources"
                value={query}
                autoFocus
                onChange={(event) => setQuery(event.target.value)}
                onKeyDown={(event) => {
                  // Inside the message box's form: Enter would send the message.
                  if (event.key === 'Enter') event.preventDefault();
                }}
              />
              {error && <ErrorNotice error={error} onRetry={load} />}
              {!catalog && !error && (
                <p className="muted small" role="status">
                  Asking the MCP servers…
                </p>
              )}
              {catalog?.problems.map((problem) => (
                <p key={problem.serverId} className="small resource-problem" data-testid="resource-problem">
                  {problem.message}
                </p>
              ))}
              {catalog && catalog.resources.length + catalog.templates.length === 0 && (
                <p className="muted small" data-testid="resource-none">
                  No enabled MCP server offers resources. Add or switch one on in Settings → MCP.
                </p>
              )}
              {catalog && resources.length + templates.length === 0 && catalog.resources.length + catalog.templates.length > 0 && (
                <p className="muted small">Nothing matches “{query}”.</p>
              )}
              <ul className="resource-list">
                {resources.map((resource) => (
                  <li key={`${resource.serverId} ${resource.uri}`}>
                    <button
                      type="button"
                      data-testid="resource-option"
                      data-uri={resource.uri}
                      title={resource.description ?? resource.uri}
                      onClick={() =>
                        pick({ serverId: resource.serverId, serverName: resource.serverName, uri: resource.uri, label: resourceLabel(resource.uri, resource.title ?? resource.name) })
                      }
                    >
                      <span>{resource.title ?? resource.name}</span>
                      <span className="muted small">
                        {resource.serverName} · <code>{resource.uri}</code>
                      </span>
                    </button>
                  </li>
                ))}
                {templates.map((t) => (
                  <li key={`${t.serverId} ${t.uriTemplate}`}>
                    <button type="button" data-testid="resource-template-option" data-template={t.uriTemplate} title={t.description ?? t.uriTemplate} onClick={() => setTemplate(t)}>
                      <span>{t.title ?? t.name} …</span>
                      <span className="muted small">
                        {t.serverName} · template <code>{t.uriTemplate}</code>
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </div>
  );
}

/** The values a resource template needs, and the URI they make. */
function TemplateForm({ template, onBack, onPick }: { template: McpResourceTemplate; onBack: () => void; onPick: (resource: PendingResource) => void }) {
  const variables = templateVariables(template.uriTemplate);
  const [values, setValues] = useState<Record<string, string>>({});
  const uri = fillTemplate(template.uriTemplate, values);
  const missing = variables.filter((name) => (values[name] ?? '').trim() === '');
  const attach = () => {
    if (missing.length > 0) return;
    onPick({ serverId: template.serverId, serverName: template.serverName, uri, label: resourceLabel(uri) });
  };
  // Not a <form>: it sits inside the message box's form, and Enter here attaches rather than sends.
  return (
    <div
      className="resource-template-form"
      role="group"
      aria-label={`Fill in ${template.name}`}
      data-testid="resource-template-form"
      onKeyDown={(event) => {
        if (event.key !== 'Enter') return;
        event.preventDefault();
        attach();
      }}
    >
      <p className="small">
        <strong>{template.title ?? template.name}</strong> <span className="muted">({template.serverName})</span>
      </p>
      {template.description && <p className="muted small">{template.description}</p>}
      {variables.map((name, index) => (
        <label key={name} className="field small">
          <span>{name}</span>
          <input
            data-testid="resource-template-field"
            data-name={name}
            value={values[name] ?? ''}
            autoFocus={index === 0}
            onChange={(event) => setValues({ ...values, [name]: event.target.value })}
          />
        </label>
      ))}
      <p className="muted small">
        <code data-testid="resource-template-uri">{uri}</code>
      </p>
      <div className="resource-template-actions">
        <button type="button" className="button small" onClick={onBack}>
          Back
        </button>
        <button
          type="button"
          className="button primary small"
          data-testid="resource-template-attach"
          disabled={missing.length > 0}
          title={missing.length > 0 ? `Fill in ${missing.join(', ')}` : undefined}
          onClick={attach}
        >
          Attach
        </button>
      </div>
    </div>
  );
}
