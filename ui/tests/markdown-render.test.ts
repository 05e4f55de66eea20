// @vitest-environment happy-dom
import { createElement, type ComponentProps } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Each image's renderer counts its renders by `alt`: one image per block shows which
// blocks render again. No highlighter: the markdown is what is under test.
const renders = new Map<string, number>();
vi.mock('../src/components/MarkdownImage', () => ({
  MarkdownImage: ({ alt }: ComponentProps<'img'>) => {
    renders.set(String(alt), (renders.get(String(alt)) ?? 0) + 1);
    return createElement('img', { alt });
  },
}));
vi.mock('../src/components/markdownPlugins', () => ({ useMarkdownPlugins: () => PLUGINS }));
const PLUGINS = {};

const { Markdown } = await import('../src/components/Markdown');

let root: Root | undefined;
afterEach(() => {
  root?.unmount();
  root = undefined;
  renders.clear();
});

function mount(): { render: (element: ReturnType<typeof createElement>) => void; html: () => string } {
  const container = document.createElement('div');
  const created = createRoot(container);
  root = created;
  return { render: (element) => flushSync(() => created.render(element)), html: () => container.innerHTML };
}

const markdown = (text: string, live: boolean) => createElement(Markdown, { text, live, animating: live });

const REPLY = [
  '## First ![first](https://example.com/a.png)\n\n',
  'A paragraph ![second](https://example.com/b.png) with **bold**.\n\n',
  '| a | b |\n| --- | --- |\n| ![third](https://example.com/c.png) | 2 |\n\n',
  'The live paragraph ![live](https://example.com/d.png) goes',
];

describe('Markdown', () => {
  it('renders a finished block once while later chunks stream in', () => {
    const page = mount();
    let text = '';
    for (const chunk of REPLY) {
      text += chunk;
      page.render(markdown(text, true));
    }
    for (const word of [' on', ' and', ' on.']) {
      text += word;
      page.render(markdown(text, true));
    }
    expect(renders.get('first')).toBe(1);
    expect(renders.get('second')).toBe(1);
    expect(renders.get('third')).toBe(1);
    // The block being written renders with each chunk.
    expect(renders.get('live')).toBe(4);
    expect(page.html()).toContain('goes on and on.');
  });

  it('renders a streamed reply as the same reply rendered live at once', () => {
    const streamed = mount();
    let text = '';
    for (const chunk of REPLY) {
      text += chunk;
      streamed.render(markdown(text, true));
    }
    const streamedHtml = streamed.html();
    root?.unmount();
    const atOnce = mount();
    atOnce.render(markdown(text, true));
    expect(streamedHtml.replaceAll(/_r_[\w]+_/g, 'id')).toBe(atOnce.html().replaceAll(/_r_[\w]+_/g, 'id'));
  });

  it('renders nothing again when the reply finishes, and a finished reply as it streamed', () => {
    const page = mount();
    let text = '';
    for (const chunk of REPLY) {
      text += chunk;
      page.render(markdown(text, true));
    }
    const live = renders.get('live');
    page.render(markdown(text, false));
    // Not even the block that was being written: its text is the same.
    expect(renders.get('first')).toBe(1);
    expect(renders.get('third')).toBe(1);
    expect(renders.get('live')).toBe(live);
    const finished = page.html();
    root?.unmount();
    const whole = mount();
    whole.render(markdown(text, false));
    expect(finished.replaceAll(/_r_[\w]+_/g, 'id')).toBe(whole.html().replaceAll(/_r_[\w]+_/g, 'id'));
    expect(finished).toContain('<table');
  });
});
