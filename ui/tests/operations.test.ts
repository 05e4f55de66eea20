import { describe, expect, it } from 'vitest';
import type { Backend } from '../src/backend/backend';
import type { Topic, TopicList } from '../src/protocol.gen';
import { FakeBackend } from './fake-backend';

/** Never run: `npm run typecheck` proves the calls below are refused. */
export async function refusedByTheCompiler(backend: Backend): Promise<TopicList> {
  // @ts-expect-error: there is no such operation
  await backend.call('topic_creat', {});
  // @ts-expect-error: the body is not the operation's request
  await backend.call('topic_delete', { id: 'x' });
  // @ts-expect-error: the operation needs a request
  await backend.call('topic_delete');
  // @ts-expect-error: an operation without a request takes none
  await backend.call('topics_list', { topicId: 'x' });
  // @ts-expect-error: the answer is the operation's response
  const wrong: Topic = await backend.call('topics_list');
  void wrong;
  return backend.call('topics_list');
}

describe('typed calls', () => {
  it('pass the name and the request through unchanged', async () => {
    const backend = new FakeBackend();
    backend.answers.set('topic_create', () => ({ id: 't' }));
    await backend.call('topics_list');
    expect(await backend.call('topic_create', { title: 'Hi' })).toEqual({ id: 't' });
    expect(backend.calls).toEqual([
      { name: 'topics_list', request: undefined },
      { name: 'topic_create', request: { title: 'Hi' } },
    ]);
  });
});
