// @vitest-environment happy-dom
import { createElement } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { math } from '../src/components/mathPlugin';

// Streamdown with the app's math plugin (and no highlighter): what a reply shows.
vi.mock('../src/components/markdownPlugins', () => ({ useMarkdownPlugins: () => ({ math }) }));
const { Markdown } = await import('../src/components/Markdown');

let root: Root | undefined;
afterEach(() => {
  root?.unmount();
  root = undefined;
});

function render(text: string) {
  const container = document.createElement('div');
  root = createRoot(container);
  flushSync(() => root?.render(createElement(Markdown, { text, live: false, animating: false })));
  const inline = [...container.querySelectorAll('.katex')].filter((katex) => !katex.closest('.katex-display'));
  return {
    text: container.textContent ?? '',
    /** The TeX of each formula (KaTeX keeps it in its MathML annotation). */
    inline: inline.map((katex) => katex.querySelector('annotation')?.textContent),
    display: [...container.querySelectorAll('.katex-display annotation')].map((annotation) => annotation.textContent),
  };
}

describe('math in a reply', () => {
  it('shows dollar amounts as text', () => {
    for (const text of ['It costs $5 and $10.', 'From $5-$10, or $1,000.50/month.', 'Between $ 5 and $ 10.', 'Pay 5 $ or 10 $.']) {
      const shown = render(text);
      expect(shown.inline, text).toEqual([]);
      expect(shown.text, text).toBe(text);
    }
  });

  it('reads $…$, $$…$$, \\(…\\) and \\[…\\] as math', () => {
    const shown = render('Euler: $e^{i\\pi} + 1 = 0$, and \\(a^2 + b^2\\) costs $5.\n\n$$\n\\int_0^1 x\\,dx\n$$\n\nAlso \\[\n\\frac{1}{2}\n\\]');
    expect(shown.inline).toEqual(['e^{i\\pi} + 1 = 0', 'a^2 + b^2']);
    expect(shown.display.map((tex) => tex?.trim())).toEqual(['\\int_0^1 x\\,dx', '\\frac{1}{2}']);
    expect(shown.text).toContain('costs $5.');
  });

  it('leaves dollars and backslashes in code alone, and an unclosed \\( as text', () => {
    const shown = render('Run `echo $5 \\(x\\)` then \\(unclosed and \\[ too.\n\n```sh\necho "$HOME" \\(x\\)\n```');
    expect(shown.inline).toEqual([]);
    expect(shown.display).toEqual([]);
    expect(shown.text).toContain('echo $5 \\(x\\)');
    expect(shown.text).toContain('then (unclosed and [ too.');
    expect(shown.text).toContain('echo "$HOME" \\(x\\)');
  });
});
