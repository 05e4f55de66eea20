import { beforeEach, describe, expect, it, vi } from 'vitest';

/** Every `invoke` the backend makes; each waits until the test answers it. */
const invoked: { command: string; args: Record<string, unknown>; answer: (value: unknown) => void }[] = [];

vi.mock('@tauri-apps/api/core', () => ({
  Channel: class {
    onmessage: (message: unknown) => void = () => {};
  },
  invoke: (command: string, args: Record<string, unknown>) =>
    new Promise((resolve) => invoked.push({ command, args, answer: resolve })),
}));

const { IpcBackend } = await import('../src/backend/ipc');

const commands = () => invoked.map((call) => call.command);
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('IpcBackend', () => {
  beforeEach(() => {
    invoked.length = 0;
  });

  it("sends a topic's stream requests one after another, so the newest listener is the one that stays", async () => {
    const backend = new IpcBackend();
    const first = backend.subscribe('stream_attach', { topicId: 't', after: [] }, () => {});
    const second = backend.subscribe('stream_open', { topicId: 't', text: 'hi' }, () => {});
    await tick();
    expect(commands()).toEqual(['stream_attach']);
    invoked[0]?.answer({ live: true });
    const attach = await first;
    await tick();
    expect(commands()).toEqual(['stream_attach', 'stream_open']);
    // The replaced subscription must not detach its successor.
    attach.close();
    await tick();
    expect(commands()).toEqual(['stream_attach', 'stream_open']);
    invoked[1]?.answer({ live: true, turnId: 'turn-1' });
    const open = await second;
    open.close();
    await tick();
    expect(commands()).toEqual(['stream_attach', 'stream_open', 'stream_detach']);
    expect(invoked[2]?.args).toEqual({ request: { topicId: 't' } });
  });

  it('does not let a detach overtake the attach that follows it', async () => {
    const backend = new IpcBackend();
    const first = backend.subscribe('stream_attach', { topicId: 't', after: [] }, () => {});
    await tick();
    invoked[0]?.answer({ live: true });
    (await first).close();
    const next = backend.subscribe('stream_attach', { topicId: 't', after: [] }, () => {});
    await tick();
    expect(commands()).toEqual(['stream_attach', 'stream_detach']);
    invoked[1]?.answer(null);
    await tick();
    expect(commands()).toEqual(['stream_attach', 'stream_detach', 'stream_attach']);
    invoked[2]?.answer({ live: false });
    expect((await next).reply).toEqual({ live: false });
  });

  it('opens other windows and the status feed through their commands', async () => {
    const backend = new IpcBackend();
    const opened = backend.openWindow('topic-9');
    const feed = backend.subscribeStatus(() => {});
    await tick();
    expect(invoked.map((call) => [call.command, Object.keys(call.args)])).toEqual([
      ['window_open', ['request']],
      ['status_subscribe', ['channel']],
    ]);
    expect(invoked[0]?.args.request).toEqual({ topicId: 'topic-9' });
    invoked.forEach((call) => call.answer(null));
    await opened;
    await feed;
  });
});
