import { describe, expect, it } from 'vitest';
import { MAX_PAGE_TURNS, PAGE_TURNS } from '../src/chat/history';
import { olderPageTurns, ScrollSpeed } from '../src/chat/olderPages';

describe('olderPageTurns', () => {
  it('reads nothing while more than the read-ahead is above the window', () => {
    expect(olderPageTurns({ above: 5_000, turnsAbove: 15, speed: 0, turnHeight: 300 })).toBe(0);
    // Counted in turns when still: heights not measured yet do not start a read.
    expect(olderPageTurns({ above: 500, turnsAbove: 40, speed: 0, turnHeight: 40 })).toBe(0);
  });

  it('reads a normal page within a few turns of the top when the view is still', () => {
    expect(olderPageTurns({ above: 2_000, turnsAbove: 8, speed: 0, turnHeight: 300 })).toBe(PAGE_TURNS);
  });

  it('reads further ahead and larger pages the faster the view moves up', () => {
    // 24 px/ms (400 px a frame): 36,000 px ahead, a page for 3 s of it.
    expect(olderPageTurns({ above: 30_000, turnsAbove: 100, speed: 24, turnHeight: 300 })).toBe(240);
    expect(olderPageTurns({ above: 40_000, turnsAbove: 100, speed: 24, turnHeight: 300 })).toBe(0);
    expect(olderPageTurns({ above: 100, turnsAbove: 100, speed: 1_000, turnHeight: 300 })).toBe(MAX_PAGE_TURNS);
    expect(olderPageTurns({ above: 100, turnsAbove: 100, speed: 1, turnHeight: 300 })).toBe(PAGE_TURNS);
  });
});

describe('ScrollSpeed', () => {
  it('measures upward motion over the last quarter second', () => {
    const speed = new ScrollSpeed();
    speed.sample(10_000, 0);
    speed.sample(9_600, 16);
    speed.sample(9_200, 32);
    expect(speed.upward(32)).toBe(25);
    // Nothing since: still.
    expect(speed.upward(500)).toBe(0);
  });

  it('starts over when the view moves down (rows put above move it down)', () => {
    const speed = new ScrollSpeed();
    speed.sample(1_000, 0);
    speed.sample(600, 16);
    speed.sample(40_000, 32);
    expect(speed.upward(32)).toBe(0);
    speed.sample(39_600, 48);
    expect(speed.upward(48)).toBe(25);
  });
});
