// Long topics for e2e tests and `cargo xtask bench ui`, written straight into the data
// dir's SQLite database (one transaction, well under a second for 10,000 messages) rather
// than through thousands of HTTP turns. The topic itself is created through the API, so
// only message rows are written here, in the shape the store writes them: each user
// message hangs under the previous one, each reply under its user message.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';

const SQLITE = process.env.SQLITE3_BIN ?? 'sqlite3';

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

const quote = (text) => `'${text.replaceAll("'", "''")}'`;

/**
 * Appends `turns` turns (a user message and one successful reply each, so 2 × `turns`
 * messages) to `topicId` in `dataDir`'s database. `model` is `{ providerId, model }`.
 * Safe while `colloquy serve` runs (SQLite's WAL and busy timeout).
 */
export function seedTopic(dataDir, topicId, turns, model) {
  const rows = [];
  const created = new Date(Date.now() - turns * 2000);
  let previousUser = null;
  for (let i = 0; i < turns; i += 1) {
    const at = new Date(created.getTime() + i * 2000).toISOString();
    const userId = randomUUID();
    const replyId = randomUUID();
    const turnId = randomUUID();
    const userParts = JSON.stringify([{ type: 'text', text: seededUserText(i) }]);
    const replyParts = JSON.stringify([{ type: 'text', text: seededReplyText(i), state: 'done' }]);
    const replyMeta = JSON.stringify({ model: { providerId: model.providerId, model: model.model } });
    rows.push(
      `(${quote(userId)}, ${quote(topicId)}, ${previousUser ? quote(previousUser) : 'NULL'}, ${quote(turnId)}, 'user', 'success', NULL, NULL, ${quote(userParts)}, '{}', 0, ${quote(at)}, ${quote(at)})`,
      `(${quote(replyId)}, ${quote(topicId)}, ${quote(userId)}, ${quote(turnId)}, 'assistant', 'success', ${quote(model.providerId)}, ${quote(model.model)}, ${quote(replyParts)}, ${quote(replyMeta)}, 0, ${quote(at)}, ${quote(at)})`,
    );
    previousUser = userId;
  }
  const sql = [
    '.timeout 10000',
    'BEGIN IMMEDIATE;',
    // Batches keep each statement well under SQLite's limits.
    ...chunk(rows, 500).map(
      (batch) =>
        `INSERT INTO messages (id, topic_id, parent_id, turn_id, role, status, provider_id, model_name, parts, metadata, selected, created_at, updated_at) VALUES\n${batch.join(',\n')};`,
    ),
    'COMMIT;',
  ].join('\n');
  const result = spawnSync(SQLITE, [path.join(dataDir, 'colloquy.db')], { input: sql, encoding: 'utf8' });
  if (result.error) throw new Error(`seeding needs the sqlite3 command line tool (${SQLITE}): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`seeding the topic failed: ${result.stderr}`);
}

function chunk(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
