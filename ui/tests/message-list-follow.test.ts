import { describe, expect, it } from 'vitest';
import { scrollMove } from '../src/components/MessageList';

const at = (top: number, height: number) => ({ top, height });

describe('scrollMove: what a scroll of the conversation means for following its end', () => {
  it('a move up away from the end with the content unchanged is the user leaving it', () => {
    expect(scrollMove(at(5000, 6000), at(4000, 6000), 1400, false)).toBe('left-end');
  });

  it('a drag of the scrollbar (pressed) leaves the end even while the content grows', () => {
    expect(scrollMove(at(5000, 6000), at(4000, 6100), 1500, true)).toBe('left-end');
  });

  it('a move up while the content changed height and nothing is pressed is virtua keeping the view still', () => {
    expect(scrollMove(at(5000, 6000), at(4700, 6300), 1000, false)).toBe('kept-still');
  });

  it('small moves and moves that stay at the end change nothing', () => {
    expect(scrollMove(at(5000, 6000), at(4998, 6000), 400, false)).toBe('none');
    expect(scrollMove(at(5000, 6000), at(4990, 6000), 20, false)).toBe('none');
  });

  it('a move down into the end follows again', () => {
    expect(scrollMove(at(4000, 6000), at(5390, 6000), 10, false)).toBe('reached-end');
    expect(scrollMove(at(4000, 6000), at(4500, 6000), 900, false)).toBe('none');
  });
});
