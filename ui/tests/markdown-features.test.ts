import { describe, expect, it } from 'vitest';
import { markdownFeatures } from '../src/chat/markdownFeatures';

describe('markdownFeatures', () => {
  it('finds inline and display math, and not a lone dollar', () => {
    expect(markdownFeatures('Euler: $e^{i\\pi} + 1 = 0$.').math).toBe(true);
    expect(markdownFeatures('$$\n\\int_0^1 x\\,dx\n').math).toBe(true);
    expect(markdownFeatures('It costs $5.').math).toBe(false);
    expect(markdownFeatures('between $ and $ signs').math).toBe(false);
    expect(markdownFeatures('It costs $5 and $10, or $1,000.').math).toBe(false);
    expect(markdownFeatures('LaTeX style: \\(a^2\\) and \\[b\\]').math).toBe(true);
    expect(markdownFeatures('Money $5, then $x$.').math).toBe(true);
  });

  it('finds a mermaid fence, not the word', () => {
    expect(markdownFeatures('Here:\n\n```mermaid\ngraph TD; A-->B\n```').mermaid).toBe(true);
    expect(markdownFeatures('~~~ Mermaid\ngraph TD\n').mermaid).toBe(true);
    expect(markdownFeatures('Mermaid draws diagrams.\n```js\nmermaid.render()\n```').mermaid).toBe(false);
  });

  it('finds Chinese, Japanese and Korean text', () => {
    expect(markdownFeatures('**中文。**后面').cjk).toBe(true);
    expect(markdownFeatures('カタカナ').cjk).toBe(true);
    expect(markdownFeatures('한국어').cjk).toBe(true);
    expect(markdownFeatures('Plain English, café, naïve — “quotes”.').cjk).toBe(false);
  });
});
