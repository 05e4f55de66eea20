import { describe, expect, it } from 'vitest';
import {
  base64Size,
  fillTemplate,
  matchesSearch,
  resourceAttachments,
  resourceLabel,
  serverOfTool,
  slashQuery,
  templateVariables,
} from '../src/chat/mcpContent';
import type { McpServer, UiPart } from '../src/protocol.gen';

describe('URI templates', () => {
  it('lists each variable once, whatever its operator', () => {
    expect(templateVariables('demo://resource/dynamic/text/{resourceId}')).toEqual(['resourceId']);
    expect(templateVariables('file://{+path}{?line,col}{&line}')).toEqual(['path', 'line', 'col']);
    expect(templateVariables('no variables')).toEqual([]);
  });

  it('fills them in, encoded as each operator wants, leaving empty optional parts out', () => {
    expect(fillTemplate('demo://resource/dynamic/text/{resourceId}', { resourceId: '7' })).toBe('demo://resource/dynamic/text/7');
    expect(fillTemplate('demo://{name}', { name: 'a b/c' })).toBe('demo://a%20b%2Fc');
    expect(fillTemplate('file://{+path}', { path: '/home/a b' })).toBe('file:///home/a%20b');
    expect(fillTemplate('x://s{?q,page}', { q: 'rust', page: '' })).toBe('x://s?q=rust');
    expect(fillTemplate('x://s{?q}', {})).toBe('x://s');
  });
});

describe('the picker and the chips', () => {
  const resource = { serverId: 's', serverName: 'Everything', uri: 'demo://resource/static/document/architecture.md', name: 'architecture.md', mimeType: 'text/markdown' };

  it('searches every word in name, URI, server and type', () => {
    expect(matchesSearch(resource, 'ARCH markdown')).toBe(true);
    expect(matchesSearch(resource, 'everything static')).toBe(true);
    expect(matchesSearch(resource, 'arch pdf')).toBe(false);
    expect(matchesSearch(resource, '  ')).toBe(true);
  });

  it('names a resource by its name, else its URI’s last segment', () => {
    expect(resourceLabel('demo://a/b%20c')).toBe('b c');
    expect(resourceLabel('demo://a/b', 'Bee')).toBe('Bee');
  });

  it('reads attached resources back from a message, ignoring other parts and broken ones', () => {
    const parts = [
      { type: 'text', text: 'hi' },
      { type: 'data-mcp-resource', data: { serverId: 's', serverName: 'E', uri: 'demo://x', contents: [], updated: true } },
      { type: 'data-mcp-resource', data: null },
    ] as UiPart[];
    expect(resourceAttachments(parts)).toEqual([{ serverId: 's', serverName: 'E', uri: 'demo://x', contents: [], updated: true }]);
  });
});

describe('slash commands and links', () => {
  it('offers commands only while the message is a single slash word', () => {
    expect(slashQuery('/')).toBe('');
    expect(slashQuery('/args')).toBe('args');
    expect(slashQuery('/args now')).toBeUndefined();
    expect(slashQuery('hello /x')).toBeUndefined();
  });

  it('finds a tool’s server by its namespace', () => {
    const servers = [{ id: '1', namespace: 'everything' }, { id: '2', namespace: 'files' }] as McpServer[];
    expect(serverOfTool('everything__get-resource-links', servers)?.id).toBe('1');
    expect(serverOfTool('read_file', servers)).toBeUndefined();
  });

  it('sizes base64', () => {
    expect(base64Size('aGk=')).toBe(2);
    expect(base64Size('aGVsbG8=')).toBe(5);
  });
});
