import type { Backend } from '../backend/backend';
import type { ExportedFile, ExportFormat } from '../protocol.gen';

/**
 * Every chat topic in one file, exported one topic per request so the caller can show
 * progress (`onProgress(done, total)`). The pieces are joined as the backend would join
 * them: one Colloquy export with every topic, Markdown separated by rules, one HTML page
 * with a section per topic.
 */
export async function exportEverything(
  backend: Backend,
  format: ExportFormat,
  onProgress: (done: number, total: number) => void,
  signal?: AbortSignal,
): Promise<ExportedFile> {
  const { topics } = await backend.call('topics_list');
  const files: ExportedFile[] = [];
  onProgress(0, topics.length);
  for (const topic of topics) {
    if (signal?.aborted) throw new DOMException('Export cancelled', 'AbortError');
    files.push(await backend.call('topic_export', { topicId: topic.id, format }));
    onProgress(files.length, topics.length);
  }
  if (files.length === 0) return backend.call('topic_export', { format });
  const day = new Date().toISOString().slice(0, 10);
  const first = files[0]!;
  const fileName = `colloquy-export-${day}.${first.fileName.split('.').pop() ?? 'txt'}`;
  return { fileName, mediaType: first.mediaType, content: join(format, files.map((f) => f.content)) };
}

function join(format: ExportFormat, contents: string[]): string {
  switch (format) {
    case 'json': {
      const documents = contents.map((c) => JSON.parse(c) as { topics: unknown[] } & Record<string, unknown>);
      const [head] = documents;
      return JSON.stringify({ ...head, topics: documents.flatMap((d) => d.topics) }, null, 2);
    }
    case 'markdown':
      return contents.join('\n---\n\n');
    case 'html': {
      // Each page holds one `<section class="topic">`; text inside is escaped, so the
      // markers cannot appear in it.
      const sections = contents.map((page) => page.slice(page.indexOf('<section class="topic">'), page.lastIndexOf('</section>') + '</section>\n'.length));
      const first = contents[0]!;
      const head = first.slice(0, first.indexOf('<section class="topic">')).replace(/<title>[^<]*<\/title>/, '<title>Colloquy export</title>');
      return `${head}${sections.join('')}</body>\n</html>\n`;
    }
  }
}
