// @vitest-environment happy-dom
import { createElement } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it, vi } from 'vitest';

// No highlighter: the swap from plain text to markdown is what is under test.
vi.mock('../src/components/markdownPlugins', () => ({ useMarkdownPlugins: () => PLUGINS }));
const PLUGINS = {};

const { Markdown, loadMarkdown } = await import('../src/components/LazyMarkdown');

let root: Root | undefined;
afterEach(() => {
  root?.unmount();
  root = undefined;
});

function mount(text: string): HTMLElement {
  const container = document.createElement('div');
  document.body.append(container);
  root = createRoot(container);
  const created = root;
  flushSync(() => created.render(createElement(Markdown, { text, live: false, animating: false })));
  return container;
}

const TEXT = 'A **bold** start\nand a second line.\n\n- one\n- two';

describe('a text before and after the markdown renderer has loaded', () => {
  it('shows the text plain at once, in paragraphs, then the markdown in its place', async () => {
    const container = mount(TEXT);
    const paragraphs = [...container.querySelectorAll('[data-testid="plain-markdown"] p')].map((p) => p.textContent);
    expect(paragraphs).toEqual(['A **bold** start\nand a second line.', '- one\n- two']);
    expect(container.querySelector('[data-streamdown="strong"]')).toBeNull();

    // Loaded after the frame is painted, without being asked.
    await vi.waitFor(() => expect(container.querySelector('[data-streamdown="strong"]')?.textContent).toBe('bold'), { timeout: 5_000 });
    expect(container.querySelector('[data-testid="plain-markdown"]')).toBeNull();
    expect([...container.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['one', 'two']);
  });

  it('renders a text mounted after the load as markdown from its first frame', async () => {
    await loadMarkdown();
    const container = mount(TEXT);
    expect(container.querySelector('[data-testid="plain-markdown"]')).toBeNull();
    expect(container.querySelector('[data-streamdown="strong"]')?.textContent).toBe('bold');
  });
});
