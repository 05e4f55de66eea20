import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Approval } from '../src/protocol.gen';
import { askForNotifications, declineNotifications, notifyApprovals, shouldOfferNotifications } from '../src/status/notifications';

const approval: Approval = {
  id: 'a1',
  topicId: 't1',
  topicTitle: 'Notes',
  messageId: 'm1',
  toolCallId: 'c1',
  toolName: 'write_file',
  input: {},
  state: 'pending',
  createdAt: '2025-01-01T00:00:00Z',
};

/** A browser with Notification support, storage, and a tab that is hidden or not. */
function browser({ permission = 'default', hidden = true, tauri = false }: { permission?: NotificationPermission; hidden?: boolean; tauri?: boolean } = {}) {
  const shown: { title: string; body?: string }[] = [];
  class FakeNotification {
    static permission: NotificationPermission = permission;
    static requestPermission = vi.fn(async () => {
      FakeNotification.permission = 'granted';
      return 'granted' as NotificationPermission;
    });
    onclick: (() => void) | null = null;
    constructor(title: string, options?: NotificationOptions) {
      shown.push({ title, ...(options?.body ? { body: options.body } : {}) });
    }
    close() {}
  }
  const storage = new Map<string, string>();
  const window = {
    Notification: FakeNotification,
    localStorage: { getItem: (k: string) => storage.get(k) ?? null, setItem: (k: string, v: string) => storage.set(k, v) },
    focus: () => {},
    ...(tauri ? { __TAURI_INTERNALS__: {} } : {}),
  };
  vi.stubGlobal('window', window);
  vi.stubGlobal('Notification', FakeNotification);
  vi.stubGlobal('document', { visibilityState: hidden ? 'hidden' : 'visible' });
  return { shown, FakeNotification };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('browser notifications for waiting tool calls', () => {
  it('are offered once; yes asks the browser, and then a hidden tab is told', async () => {
    const { shown, FakeNotification } = browser();
    expect(shouldOfferNotifications()).toBe(true);
    await askForNotifications();
    expect(FakeNotification.requestPermission).toHaveBeenCalledTimes(1);
    expect(shouldOfferNotifications()).toBe(false);
    notifyApprovals([approval], () => {});
    expect(shown).toEqual([{ title: 'Approval needed', body: 'write_file in “Notes” waits for your answer.' }]);
  });

  it('"No thanks" is final, and nothing is shown without permission', () => {
    const { shown } = browser();
    declineNotifications();
    expect(shouldOfferNotifications()).toBe(false);
    notifyApprovals([approval], () => {});
    expect(shown).toEqual([]);
  });

  it('a visible tab is not notified (the user sees the inbox)', () => {
    const { shown } = browser({ permission: 'granted', hidden: false });
    notifyApprovals([approval], () => {});
    expect(shown).toEqual([]);
  });

  it('the desktop app never uses them: its backend sends OS notifications', () => {
    const { shown } = browser({ permission: 'granted', tauri: true });
    expect(shouldOfferNotifications()).toBe(false);
    notifyApprovals([approval], () => {});
    expect(shown).toEqual([]);
  });
});
