import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';

export function streamOf<T>(items: readonly T[]): ReadableStream<T> {
  return new ReadableStream<T>({
    start(controller) {
      for (const item of items) controller.enqueue(item);
      controller.close();
    },
  });
}

/** Folds chunks exactly as a stock AI SDK client does; returns the final message (JSON round-tripped). */
export async function fold(chunks: readonly UIMessageChunk[]): Promise<unknown> {
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({ stream: streamOf(chunks), terminateOnError: true })) {
    last = message;
  }
  return JSON.parse(JSON.stringify(last)) as unknown;
}

export async function drain<T>(stream: ReadableStream<T>): Promise<T[]> {
  const items: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return items;
    items.push(value);
  }
}
