// What the MCP browser tests share: the real `server-everything` added to a stack's
// backend once, ready with the tools a test needs.

import path from 'node:path';
import { REPO, waitUntil } from './harness.mjs';

export const EVERYTHING = path.join(REPO, 'tests/mcp-servers/node_modules/.bin/mcp-server-everything');

/**
 * Adds server-everything (named `everything`, over stdio) to the stack's backend once, with
 * `options` (e.g. `{ trustReadOnly: true }`), and waits until it is ready and offers `tools`
 * (namespaced names). Resolves with the server.
 */
export async function addEverything(stack, { tools = [], ...options } = {}) {
  const listed = await stack.server.api('mcp_servers_list');
  if (!listed.some((server) => server.name === 'everything')) {
    await stack.server.api('mcp_server_create', { name: 'everything', transport: { kind: 'stdio', command: EVERYTHING, args: ['stdio'] }, ...options });
  }
  let ready;
  await waitUntil(
    `server-everything is ready${tools.length > 0 ? ` and offers ${tools.join(', ')}` : ''}`,
    async () => {
      const servers = await stack.server.api('mcp_servers_list');
      ready = servers.find((server) => server.name === 'everything' && server.status.state === 'ready' && tools.every((tool) => server.tools.includes(tool)));
      return ready !== undefined;
    },
    { timeout: 30_000 },
  );
  return ready;
}
