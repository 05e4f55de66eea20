import { isTauri } from '../backend/ipc';
import type { Approval } from '../protocol.gen';

const ASKED_KEY = 'colloquy.notifications.asked';

/**
 * Browser notifications for tool calls waiting for the user while the tab is hidden.
 * The desktop app does not use these: its backend sends the OS notifications itself.
 */
export function notificationsSupported(): boolean {
  return !isTauri() && typeof window !== 'undefined' && 'Notification' in window;
}

/** Offer to turn notifications on: supported, undecided, and not offered before. */
export function shouldOfferNotifications(): boolean {
  if (!notificationsSupported() || Notification.permission !== 'default') return false;
  try {
    return window.localStorage.getItem(ASKED_KEY) === null;
  } catch {
    return false;
  }
}

function remember(): void {
  try {
    window.localStorage.setItem(ASKED_KEY, new Date().toISOString());
  } catch {
    // Without storage the offer may come back next time; nothing else changes.
  }
}

/** The user said yes to the offer: ask the browser (once; a "no" is final). */
export async function askForNotifications(): Promise<NotificationPermission | undefined> {
  remember();
  if (!notificationsSupported()) return undefined;
  return Notification.requestPermission();
}

/** The user said no to the offer: never offer again. */
export function declineNotifications(): void {
  remember();
}

/** Tells the user about approvals that became pending, if the tab is hidden and they allowed it. */
export function notifyApprovals(approvals: readonly Approval[], open: (approval: Approval) => void): void {
  if (!notificationsSupported() || Notification.permission !== 'granted' || document.visibilityState !== 'hidden') return;
  for (const approval of approvals) {
    const notification = new Notification('Approval needed', {
      body: `${approval.toolName} in “${approval.topicTitle || 'Untitled'}” waits for your answer.`,
      tag: `approval-${approval.id}`,
    });
    notification.onclick = () => {
      window.focus();
      open(approval);
      notification.close();
    };
  }
}
