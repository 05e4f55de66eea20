import { describe, expect, it } from 'vitest';
import { placeBeside } from '../src/components/popoverPlacement';

const viewport = { width: 800, height: 600 };
const anchor = (left: number, top: number, width = 100, height = 30) => ({ left, top, right: left + width, bottom: top + height });

describe('placeBeside', () => {
  it('puts a panel below its anchor, lined up with its start, when it fits', () => {
    expect(placeBeside(anchor(100, 50), { width: 250, height: 200 }, viewport)).toEqual({ top: 84, left: 100, room: 508, side: 'below' });
  });

  it('flips above when there is no room below (the Add-model menu over the composer)', () => {
    const placed = placeBeside(anchor(100, 480), { width: 250, height: 200 }, viewport);
    expect(placed).toEqual({ top: 276, left: 100, room: 468, side: 'above' });
  });

  it('stays on the preferred side when the other has less room, and shrinks to its room', () => {
    expect(placeBeside(anchor(100, 300, 100, 100), { width: 250, height: 400 }, viewport, { side: 'above' })).toEqual({
      top: 8,
      left: 100,
      room: 288,
      side: 'above',
    });
  });

  it('lines up with the end edge, and shifts to stay inside the window', () => {
    expect(placeBeside(anchor(650, 10), { width: 300, height: 100 }, viewport, { align: 'end' }).left).toBe(450);
    expect(placeBeside(anchor(700, 10), { width: 300, height: 100 }, viewport).left).toBe(492);
    expect(placeBeside(anchor(20, 10), { width: 300, height: 100 }, viewport, { align: 'end' }).left).toBe(8);
  });

  it('keeps the panel inside the window when its anchor has scrolled out of it', () => {
    const placed = placeBeside(anchor(100, 700), { width: 250, height: 200 }, viewport);
    expect(placed.top).toBeGreaterThanOrEqual(8);
    expect(placed.top + 200).toBeLessThanOrEqual(592);
  });
});
