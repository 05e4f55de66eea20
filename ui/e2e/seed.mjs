// Long topics for e2e tests and `cargo xtask bench ui`, through the app's own import
// (`topics_import` with a Colloquy JSON export, docs/export-format.md) rather than
// thousands of HTTP turns: one request, one transaction, the rows written by the store
// itself (search index included). Each user message hangs under the previous one, each
// reply under its user message, as a real conversation is stored.

import { randomUUID } from 'node:crypto';

/** Text of the `index`-th seeded reply: a few markdown shapes, so heights vary. */
export function seededReplyText(index) {
  switch (index % 4) {
    case 0:
      return `Answer ${index}: a short paragraph with **bold** text and \`code\`.`;
    case 1:
      return `Answer ${index}:\n\n- first point\n- second point\n- third point`;
    case 2:
      return `Answer ${index}:\n\n\`\`\`js\nconst value = ${index};\nconsole.log(value);\n\`\`\``;
    default:
      return `Answer ${index}: ${'a longer paragraph that wraps over several lines in a normal window. '.repeat(4)}`;
  }
}

export function seededUserText(index) {
  return `Question ${index}`;
}

/**
 * A `colloquy-export` document (version 1) of one topic titled `title` with `turns`
 * turns: a user message and one successful reply each (2 × `turns` messages), two seconds
 * apart, ending now. `model` is `{ providerId, model }`: the topic's model and who answered.
 */
export function longTopicExport(title, turns, model) {
  const start = Date.now() - turns * 2000;
  const messages = [];
  let previousUser;
  for (let i = 0; i < turns; i += 1) {
    const at = new Date(start + i * 2000).toISOString();
    const turnId = randomUUID();
    const userId = randomUUID();
    messages.push(
      {
        id: userId,
        parentId: previousUser,
        turnId,
        role: 'user',
        status: 'success',
        selected: 0,
        parts: [{ type: 'text', text: seededUserText(i) }],
        metadata: { turnId },
        createdAt: at,
        updatedAt: at,
      },
      {
        id: randomUUID(),
        parentId: userId,
        turnId,
        role: 'assistant',
        status: 'success',
        model,
        selected: 0,
        parts: [{ type: 'text', text: seededReplyText(i), state: 'done' }],
        metadata: { turnId, model: model.model },
        createdAt: at,
        updatedAt: at,
      },
    );
    previousUser = userId;
  }
  const now = new Date().toISOString();
  return {
    format: 'colloquy-export',
    version: 1,
    exportedAt: now,
    app: 'colloquy e2e seed',
    topics: [{ id: randomUUID(), title, model, createdAt: new Date(start).toISOString(), updatedAt: now, messages }],
  };
}

/**
 * Imports a topic of `turns` turns (see `longTopicExport`) through `server.api` (the e2e
 * harness's `startServer`) and returns its id. `model` must name an existing provider, so
 * the topic keeps it and a new message in it streams from that provider. Fails unless
 * every message was imported.
 */
export async function seedTopic(server, { title = 'Long topic', turns, model }) {
  const document = longTopicExport(title, turns, model);
  const report = await server.api('topics_import', { content: JSON.stringify(document) });
  const [topic] = report.imported ?? [];
  if (report.imported?.length !== 1 || report.skipped.length > 0 || topic.messages !== turns * 2) {
    throw new Error(`seeding the long topic imported less than asked (${turns * 2} messages): ${JSON.stringify(report).slice(0, 2000)}`);
  }
  return topic.topicId;
}
