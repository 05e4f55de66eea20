/** Where a pop-over panel goes by preference: below or above its anchor, lined up with its start or end edge. */
export interface PopoverPlacement {
  side?: 'below' | 'above';
  align?: 'start' | 'end';
}

interface Box {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

export interface Placed {
  top: number;
  left: number;
  /** The height the panel may take on its side (it scrolls beyond). */
  room: number;
  side: 'below' | 'above';
}

/** Kept between a panel and the window's edges. */
const MARGIN = 8;
/** Between a panel and its anchor. */
const GAP = 4;

/**
 * Where a panel of `size` goes beside `anchor` in a `viewport`: on the preferred side if
 * it fits there, else on the other side if that has more room (it flips), at most as tall
 * as its side's room; moved sideways to stay inside the window (it shifts).
 */
export function placeBeside(
  anchor: Box,
  size: { width: number; height: number },
  viewport: { width: number; height: number },
  { side = 'below', align = 'start' }: PopoverPlacement = {},
): Placed {
  const roomBelow = viewport.height - anchor.bottom - GAP - MARGIN;
  const roomAbove = anchor.top - GAP - MARGIN;
  const preferred = side === 'below' ? roomBelow : roomAbove;
  const other = side === 'below' ? roomAbove : roomBelow;
  const chosen = size.height > preferred && other > preferred ? (side === 'below' ? 'above' : 'below') : side;
  const room = Math.max(0, chosen === 'below' ? roomBelow : roomAbove);
  const height = Math.min(size.height, room);
  const top = chosen === 'below' ? anchor.bottom + GAP : anchor.top - GAP - height;
  const left = align === 'start' ? anchor.left : anchor.right - size.width;
  return {
    // An anchor scrolled out of the window still leaves its panel inside it.
    top: clamp(top, MARGIN, viewport.height - MARGIN - height),
    left: clamp(left, MARGIN, viewport.width - MARGIN - size.width),
    room,
    side: chosen,
  };
}

function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(value, high));
}

/**
 * Shows `panel` in the top layer (a `popover`: no `overflow` clips it and nothing is
 * drawn over it, while it stays where it is in the DOM, for the Tab order and for clicks
 * inside it) and keeps it placed beside `anchor()` (`placeBeside`) as the window resizes,
 * anything scrolls or either element changes size. The panel's CSS reads its room as
 * `--popover-room`. Returns what takes it down again.
 */
export function floatBeside(panel: HTMLElement, anchor: () => Element | null, placement: PopoverPlacement): () => void {
  panel.setAttribute('popover', 'manual');
  // Floating from the start (styles.css), so it is measured as it will be shown.
  panel.dataset.popoverSide = placement.side ?? 'below';
  try {
    panel.showPopover();
  } catch {
    // No Popover API (or not connected): a fixed panel, drawn over most of the page.
  }
  const place = () => {
    const anchorElement = anchor();
    if (!anchorElement || !panel.isConnected) return;
    const viewport = { width: document.documentElement.clientWidth, height: document.documentElement.clientHeight };
    // The size the panel wants, before this room and this place limit it.
    panel.style.removeProperty('--popover-room');
    panel.style.top = '0px';
    panel.style.left = '0px';
    const placed = placeBeside(anchorElement.getBoundingClientRect(), { width: panel.offsetWidth, height: panel.offsetHeight }, viewport, placement);
    panel.style.setProperty('--popover-room', `${placed.room}px`);
    panel.style.top = `${placed.top}px`;
    panel.style.left = `${placed.left}px`;
    panel.dataset.popoverSide = placed.side;
  };
  let frame = 0;
  const placeSoon = () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(place);
  };
  place();
  window.addEventListener('resize', place);
  // Any scrolling element may move the anchor: listen in the capture phase.
  document.addEventListener('scroll', place, true);
  // A size change seen by the observer is placed in the next frame, not inside its callback.
  const observer = new ResizeObserver(placeSoon);
  observer.observe(panel);
  const anchorElement = anchor();
  if (anchorElement) observer.observe(anchorElement);
  return () => {
    cancelAnimationFrame(frame);
    window.removeEventListener('resize', place);
    document.removeEventListener('scroll', place, true);
    observer.disconnect();
    try {
      panel.hidePopover();
    } catch {
      // Not shown as a popover.
    }
  };
}
