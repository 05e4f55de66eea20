import type { McpResource, McpResourceTemplate, McpServer, ResourceAttachment, UiPart } from '../protocol.gen';

/** The kind of the user-message part that holds an attached MCP resource. */
export const RESOURCE_PART = 'data-mcp-resource';

/** A resource picked for the next message; the backend reads it when the message is sent. */
export interface PendingResource {
  serverId: string;
  serverName: string;
  uri: string;
  /** What the chip shows. */
  label: string;
}

/** The attached resources of a message, from its parts. */
export function resourceAttachments(parts: readonly UiPart[]): ResourceAttachment[] {
  const out: ResourceAttachment[] = [];
  for (const part of parts) {
    if (part.type !== RESOURCE_PART || !('data' in part)) continue;
    const data = part.data as Partial<ResourceAttachment> | null;
    if (data && typeof data.uri === 'string' && typeof data.serverName === 'string') {
      out.push({ serverId: data.serverId ?? '', serverName: data.serverName, uri: data.uri, contents: Array.isArray(data.contents) ? data.contents : [], updated: data.updated === true });
    }
  }
  return out;
}

/** A short name for a resource: its own name, else the last segment of its URI. */
export function resourceLabel(uri: string, name?: string): string {
  if (name && name.trim() !== '') return name.trim();
  const segments = uri.split(/[/:]/).filter((s) => s !== '');
  const last = segments[segments.length - 1] ?? uri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** Whether a resource or template matches what was typed in the picker's search. */
export function matchesSearch(item: McpResource | McpResourceTemplate, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const uri = 'uri' in item ? item.uri : item.uriTemplate;
  const haystack = [item.name, item.title, item.description, uri, item.serverName, item.mimeType].filter(Boolean).join(' ').toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** The variables of an RFC 6570 URI template, in order, each once (`{id}`, `{+path}`, `{?a,b}`). */
export function templateVariables(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(/\{([^}]*)\}/g)) {
    const body = (match[1] ?? '').replace(/^[+#./;?&]/, '');
    for (const raw of body.split(',')) {
      const name = raw.replace(/(\*|:\d+)$/, '').trim();
      if (name !== '' && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/**
 * A URI from a template and values (RFC 6570 level 1–3 operators): `{x}` is
 * percent-encoded, `{+x}` and `{#x}` keep reserved characters, `{/x}` `{.x}` `{;x}` `{?x}`
 * `{&x}` add their prefix; an empty value leaves a query or path part out.
 */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]*)\}/g, (_, body: string) => {
    const operator = /^[+#./;?&]/.test(body) ? body[0] : '';
    const names = body
      .slice(operator.length)
      .split(',')
      .map((raw) => raw.replace(/(\*|:\d+)$/, '').trim())
      .filter((name) => name !== '');
    const reserved = operator === '+' || operator === '#';
    const encode = (value: string) => (reserved ? encodeURI(value) : encodeURIComponent(value));
    const given = names.filter((name) => (values[name] ?? '') !== '');
    if (given.length === 0) return '';
    switch (operator) {
      case '?':
      case '&':
        return operator + given.map((name) => `${name}=${encode(values[name] ?? '')}`).join('&');
      case ';':
        return given.map((name) => `;${name}=${encode(values[name] ?? '')}`).join('');
      case '/':
      case '.':
        return given.map((name) => operator + encode(values[name] ?? '')).join('');
      case '#':
        return '#' + given.map((name) => encode(values[name] ?? '')).join(',');
      default:
        return given.map((name) => encode(values[name] ?? '')).join(',');
    }
  });
}

/** What follows `/` while the message is only a slash command being typed, else undefined. */
export function slashQuery(text: string): string | undefined {
  const match = /^\/(\S*)$/.exec(text);
  return match ? (match[1] ?? '') : undefined;
}

/** The MCP server a namespaced tool (`<namespace>__<tool>`) belongs to. */
export function serverOfTool(toolName: string, servers: readonly McpServer[]): McpServer | undefined {
  const at = toolName.indexOf('__');
  if (at <= 0) return undefined;
  const namespace = toolName.slice(0, at);
  return servers.find((server) => server.namespace === namespace);
}

/** Bytes of standard base64, decoded. */
export function base64Size(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}
