import { useCallback, useEffect, useRef, useState } from 'react';
import { floatBeside, type PopoverPlacement } from './popoverPlacement';

/**
 * Open/closed state for a small pop-over menu or panel: it closes on Escape and on a
 * click outside the element `ref` is attached to (the trigger and the panel inside it).
 * `panelRef` goes on the panel: it is then shown above everything, never clipped, beside
 * the `ref` element on the side `placement` prefers, flipped and shifted to stay inside the
 * window (see `floatBeside`).
 */
export function usePopover<T extends HTMLElement>({ side = 'below', align = 'start' }: PopoverPlacement = {}) {
  const [open, setOpen] = useState(false);
  const ref = useRef<T>(null);
  const panelRef = useCallback((panel: HTMLElement | null) => (panel ? floatBeside(panel, () => ref.current, { side, align }) : undefined), [side, align]);

  useEffect(() => {
    if (!open) return;
    const onPointer = (event: MouseEvent) => {
      if (ref.current && !ref.current.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      // Taken: the window's shortcuts (Esc stops a reply) leave it alone.
      event.preventDefault();
      setOpen(false);
    };
    document.addEventListener('mousedown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  return { open, setOpen, ref, panelRef };
}
