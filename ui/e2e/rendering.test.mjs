// How a reply's markdown looks, checked by computed style rather than markup: Streamdown
// emits Tailwind classes the app does not ship, so an element that is in the DOM can
// still render as plain text (bold at weight 400 was the bug). Math, mermaid and CJK
// arrive through plugins loaded on demand; Copy and the message time are checked too.

import assert from 'node:assert/strict';
import { addTestkitProvider, e2eTest, lastAssistant, newTopicAndSend, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

// A remote image waits for a click (images.test.mjs follows it further).
const IMAGE = 'https://images.example.com/square.png';

const EVERY_ELEMENT = `# Heading one

## Heading two

### Heading three

Some **bold words**, some *italic words*, some ~~struck words~~, \`inline code\` and a [link](https://example.com/page).

- first bullet
  - nested bullet
    - deeper bullet
- second bullet

1. first step
2. second step
   1. sub-step

- [x] done task
- [ ] open task

> A quoted line.

| Name | Value |
| --- | --- |
| alpha | 1 |
| beta | 2 |

\`\`\`js
const answer = 42;
\`\`\`

A claim with a footnote.[^note]

![a red square](${IMAGE})

---

The end.

[^note]: The footnote text.
`;

/** Computed styles of the first element matching each selector in the last reply. */
async function styles(page, selectors) {
  return lastAssistant(page).evaluate((message, wanted) => {
    const { getComputedStyle } = message.ownerDocument.defaultView;
    const out = {};
    for (const [name, selector] of Object.entries(wanted)) {
      const element = message.querySelector(selector);
      if (!element) {
        out[name] = null;
        continue;
      }
      const style = getComputedStyle(element);
      const box = element.getBoundingClientRect();
      out[name] = {
        tag: element.tagName.toLowerCase(),
        fontWeight: Number(style.fontWeight),
        fontStyle: style.fontStyle,
        fontFamily: style.fontFamily,
        fontSize: parseFloat(style.fontSize),
        textDecoration: style.textDecorationLine,
        color: style.color,
        listStyleType: style.listStyleType,
        display: style.display,
        verticalAlign: style.verticalAlign,
        paddingLeft: parseFloat(style.paddingLeft),
        borderTopWidth: parseFloat(style.borderTopWidth),
        borderTopStyle: style.borderTopStyle,
        borderLeftWidth: parseFloat(style.borderLeftWidth),
        left: box.left,
        width: box.width,
        height: box.height,
        href: element.getAttribute('href'),
      };
    }
    out.bodyColor = getComputedStyle(message).color;
    out.bodyFontSize = parseFloat(getComputedStyle(message.querySelector('p') ?? message).fontSize);
    return out;
  }, selectors);
}

async function replyWith(page, markdown, prompt) {
  await stack.testkit.script({ chunks: [markdown] });
  await newTopicAndSend(page, prompt);
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  // A text is plain until the markdown renderer has loaded (see LazyMarkdown).
  await waitUntil('the reply is rendered as markdown', async () => (await lastAssistant(page).locator('[data-testid="plain-markdown"]').count()) === 0);
}

e2eTest(stack, 'every markdown element Streamdown renders looks like what it is', async () => {
  const page = await stack.openApp();
  await replyWith(page, EVERY_ELEMENT, 'Show me every element');
  const s = await styles(page, {
    strong: '[data-streamdown="strong"]',
    em: 'em',
    del: 'del',
    link: 'a[data-streamdown="link"]',
    inlineCode: '[data-streamdown="inline-code"]',
    h1: 'h1',
    h2: 'h2',
    h3: 'h3',
    ul: '[data-streamdown="unordered-list"]',
    nestedUl: '[data-streamdown="unordered-list"] [data-streamdown="unordered-list"]',
    deeperUl: '[data-streamdown="unordered-list"] [data-streamdown="unordered-list"] [data-streamdown="unordered-list"]',
    firstBullet: '[data-streamdown="unordered-list"] > li',
    nestedBullet: '[data-streamdown="unordered-list"] [data-streamdown="unordered-list"] > li',
    ol: '[data-streamdown="ordered-list"]',
    olItem: '[data-streamdown="ordered-list"] > li',
    nestedOlItem: '[data-streamdown="ordered-list"] [data-streamdown="ordered-list"] > li',
    taskItem: '.task-list-item',
    taskBox: '.task-list-item input[type="checkbox"]',
    blockquote: 'blockquote',
    table: 'table',
    th: 'th',
    td: 'td',
    pre: 'pre',
    hr: 'hr',
    footnoteSup: 'sup:has([data-footnote-ref])',
    footnoteRef: '[data-footnote-ref]',
    footnotes: '[data-footnotes]',
    footnotesLabel: '[data-footnotes] h2',
    imageButton: '[data-testid="markdown-image-load"]',
  });

  // Inline marks.
  assert.ok(s.strong.fontWeight >= 600, `bold has weight ${s.strong.fontWeight}`);
  assert.equal(s.em.fontStyle, 'italic');
  assert.equal(s.del.textDecoration, 'line-through');
  assert.equal(s.link.href, 'https://example.com/page');
  assert.match(s.link.textDecoration, /underline/);
  assert.notEqual(s.link.color, s.bodyColor, 'a link is coloured apart from the text');
  assert.match(s.inlineCode.fontFamily, /mono|Menlo|Consolas/i);
  assert.match(s.pre.fontFamily, /mono|Menlo|Consolas/i);

  // Headings: bold, and each larger than the next level and than the text.
  for (const h of [s.h1, s.h2, s.h3]) assert.ok(h.fontWeight >= 600, `${h.tag} has weight ${h.fontWeight}`);
  assert.ok(s.h1.fontSize > s.h2.fontSize && s.h2.fontSize > s.h3.fontSize && s.h3.fontSize > s.bodyFontSize, 'headings step down in size');

  // Lists: markers, and nested lists indented further.
  assert.equal(s.firstBullet.display, 'list-item');
  assert.equal(s.ul.listStyleType, 'disc');
  assert.equal(s.nestedUl.listStyleType, 'circle');
  assert.equal(s.deeperUl.listStyleType, 'square');
  assert.ok(s.nestedBullet.left > s.firstBullet.left + 10, 'a nested bullet is indented');
  assert.equal(s.ol.listStyleType, 'decimal');
  assert.equal(s.olItem.display, 'list-item');
  assert.ok(s.nestedOlItem.left > s.olItem.left + 10, 'a nested step is indented');

  // A task shows its checkbox and no bullet.
  assert.notEqual(s.taskBox, null, 'a task item has a checkbox');
  assert.ok(s.taskBox.width > 0 && s.taskBox.height > 0, 'the checkbox is visible');
  assert.equal(s.taskItem.listStyleType, 'none', 'a task item shows no bullet');
  const checked = await lastAssistant(page).locator('.task-list-item input[type="checkbox"]').evaluateAll((boxes) => boxes.map((b) => b.checked));
  assert.deepEqual(checked, [true, false]);

  // Blocks.
  assert.ok(s.blockquote.borderLeftWidth >= 2, 'a quote has a rule at its left');
  assert.ok(s.th.borderTopWidth >= 1 && s.th.borderTopStyle === 'solid', 'table header cells have borders');
  assert.ok(s.td.borderTopWidth >= 1 && s.td.borderTopStyle === 'solid', 'table cells have borders');
  assert.ok(s.th.fontWeight >= 600, 'a header cell is bold');
  assert.ok(s.hr.height >= 1 && s.hr.borderTopWidth >= 1 && s.hr.borderTopStyle !== 'none', 'the rule is visible');
  assert.ok(s.imageButton && s.imageButton.width > 0, 'the image is offered to load');

  // Footnotes: a raised, linked reference, and the notes at the end with a hidden label.
  assert.equal(s.footnoteSup.verticalAlign, 'super');
  assert.ok(s.footnoteSup.fontSize < s.bodyFontSize, 'the reference is smaller than the text');
  assert.match(s.footnoteRef.href, /^#/);
  assert.notEqual(s.footnotes, null);
  assert.ok(s.footnotesLabel.width <= 1 && s.footnotesLabel.height <= 1, 'the "Footnotes" label is for screen readers only');
  assert.match(await lastAssistant(page).locator('[data-footnotes]').innerText(), /The footnote text/);
});

e2eTest(stack, 'code blocks are coloured by the highlighter in its worker; an unknown language stays plain', async () => {
  const page = await stack.openApp();
  const reply = ['```rust', 'fn main() {', '    let answer = "forty-two";', '}', '```', '', '```no-such-language', 'fn plain() {}', '```', ''].join('\n');
  await replyWith(page, reply, 'Show me some code');
  const blocks = lastAssistant(page).locator('pre');
  await waitUntil('the Rust block is coloured', async () => (await blocks.first().locator('span[style*="--shiki-dark"]').count()) > 3);
  const colours = await blocks.first().evaluate((pre) => {
    const { getComputedStyle } = pre.ownerDocument.defaultView;
    const tokens = [...pre.querySelectorAll('span[style*="--shiki-dark"]')];
    const colourOf = (text) => {
      const token = tokens.find((span) => span.textContent.trim() === text);
      return token ? getComputedStyle(token).color : null;
    };
    return { keyword: colourOf('fn'), name: colourOf('main'), string: colourOf('"forty-two"') ?? colourOf('forty-two') };
  });
  assert.ok(colours.keyword && colours.name && colours.string, `tokens found: ${JSON.stringify(colours)}`);
  assert.notEqual(colours.keyword, colours.name, 'a keyword is coloured apart from a name');
  assert.notEqual(colours.string, colours.name, 'a string is coloured apart from a name');
  // Shiki runs in the page's one highlighter worker, not on the page's thread.
  assert.deepEqual(page.workers().map((worker) => /codeHighlighter\.worker/.test(worker.url())), [true]);
  // A language Shiki does not know is shown as it was written.
  assert.equal((await blocks.nth(1).innerText()).trim(), 'fn plain() {}');
});

e2eTest(stack, 'inline and display math render with KaTeX, with its stylesheet', async () => {
  const page = await stack.openApp();
  const markdown = ['Euler: $e^{i\\pi} + 1 = 0$ inline.', '', '$$', '\\int_0^1 x^2 \\, dx = \\frac{1}{3}', '$$', ''].join('\n');
  await replyWith(page, markdown, 'Some math');
  const message = lastAssistant(page);
  await waitUntil('KaTeX rendered the math', async () => (await message.locator('.katex').count()) >= 2);
  const math = await message.evaluate((root) => ({
    inline: root.querySelectorAll('.katex:not(.katex-display .katex) math').length,
    display: root.querySelectorAll('.katex-display math').length,
    raw: root.innerText.includes('$$') || root.innerText.includes('\\frac'),
    // KaTeX's stylesheet arrived with the plugin: its MathML copy is visually hidden.
    mathmlHidden: (() => {
      const mathml = root.querySelector('.katex-mathml');
      return mathml ? mathml.getBoundingClientRect().width <= 1 : false;
    })(),
    katexFont: root.ownerDocument.defaultView.getComputedStyle(root.querySelector('.katex')).fontFamily,
  }));
  // The fonts themselves arrive (the stylesheet names only their woff2 files: vite.config.ts).
  const fonts = await message.evaluate(async (root) => {
    const { fonts } = root.ownerDocument;
    await fonts.ready;
    return [...fonts].filter((font) => font.family.includes('KaTeX') && font.status === 'loaded').map((font) => font.family);
  });
  assert.ok(fonts.some((family) => family.includes('KaTeX_Main')), `KaTeX's fonts loaded: ${fonts.join(', ')}`);
  assert.ok(math.inline >= 1, 'inline math has MathML');
  assert.ok(math.display >= 1, 'display math has MathML');
  assert.equal(math.raw, false, 'no raw TeX is shown');
  assert.equal(math.mathmlHidden, true, "KaTeX's stylesheet is loaded");
  assert.match(math.katexFont, /KaTeX/);
});

e2eTest(stack, 'dollar amounts stay text beside math, and \\(…\\) and \\[…\\] are math', async () => {
  const page = await stack.openApp();
  const markdown = [
    'The plan costs $5 and the pro plan $10, or $1,000 a year ($5-$10 a month).',
    '',
    'Inline \\(a^2 + b^2 = c^2\\) and $x_1$, shown as math.',
    '',
    '\\[',
    '\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}',
    '\\]',
    '',
    'In code it stays: `echo $5 \\(x\\)`.',
    '',
  ].join('\n');
  await replyWith(page, markdown, 'Prices and math');
  const message = lastAssistant(page);
  await waitUntil('KaTeX rendered the math', async () => (await message.locator('.katex').count()) >= 3);
  const shown = await message.evaluate((root) => ({
    paragraphs: [...root.querySelectorAll('p')].map((p) => p.innerText),
    inline: [...root.querySelectorAll('.katex:not(.katex-display .katex) annotation')].map((a) => a.textContent),
    display: [...root.querySelectorAll('.katex-display annotation')].map((a) => a.textContent.trim()),
  }));
  assert.equal(shown.paragraphs[0], 'The plan costs $5 and the pro plan $10, or $1,000 a year ($5-$10 a month).');
  assert.deepEqual(shown.inline, ['a^2 + b^2 = c^2', 'x_1']);
  assert.deepEqual(shown.display, ['\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}']);
  assert.ok(
    shown.paragraphs.some((text) => text.includes('In code it stays: echo $5 \\(x\\).')),
    `code is left alone: ${JSON.stringify(shown.paragraphs)}`,
  );
});

e2eTest(stack, 'CJK text renders, with emphasis next to CJK punctuation', async () => {
  const page = await stack.openApp();
  // CommonMark alone leaves "**…。**" followed by a letter unbolded; the CJK rules bold it.
  await replyWith(page, '**これは強調です。**次の文です。中文和한국어。\n', 'CJK please');
  const message = lastAssistant(page);
  await waitUntil('the emphasis is bold', async () => (await message.locator('[data-streamdown="strong"]').count()) === 1);
  const strong = message.locator('[data-streamdown="strong"]');
  assert.equal(await strong.innerText(), 'これは強調です。');
  assert.ok(Number(await strong.evaluate((el) => el.ownerDocument.defaultView.getComputedStyle(el).fontWeight)) >= 600);
  assert.match(await message.locator('[data-testid="message-text"]').innerText(), /次の文です。中文和한국어。/);
  assert.doesNotMatch(await message.locator('[data-testid="message-text"]').innerText(), /\*\*/);
});

e2eTest(stack, 'Copy puts the whole reply on the clipboard as Markdown; messages show when they were written', async () => {
  const page = await stack.openApp();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.server.origin });
  const markdown = '## Result\n\nSome **bold** and a list:\n\n- one\n- two\n';
  await replyWith(page, markdown, 'Something to copy');

  const copy = page.locator('.single-reply').last().locator('[data-testid="message-copy"]');
  await copy.click();
  await waitUntil('the button says it copied', async () => (await copy.innerText()) === 'Copied');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), markdown);

  // The user's message copies as typed.
  const user = page.locator('.user-message').last();
  await user.locator('[data-testid="message-copy"]').click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'Something to copy');

  // Both messages show their time (as stored), with the full date on hover.
  for (const message of [page.locator('[data-testid="message"][data-role="user"]').last(), lastAssistant(page)]) {
    const time = message.locator('[data-testid="message-time"]');
    await time.waitFor();
    const at = new Date(await time.getAttribute('datetime'));
    assert.ok(Math.abs(Date.now() - at.getTime()) < 5 * 60_000, 'the stored time is now');
    assert.match(await time.innerText(), /\d{1,2}:\d{2}/);
    assert.ok((await time.getAttribute('title')).length > 10);
  }
});

