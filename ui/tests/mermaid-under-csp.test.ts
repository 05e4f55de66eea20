// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { STYLE_MARK, renderUnderCsp } from '../src/components/mermaidUnderCsp';
import { svgImage } from '../src/components/mermaidImage';

/** What mermaid's render does to the page, in short: lay out in a div, style it, serialize it. */
async function mermaidLikeRender(id: string): Promise<string> {
  const workbench = document.createElement('div');
  workbench.id = id;
  document.body.append(workbench);
  workbench.innerHTML = '<svg viewBox="0 0 120.5 80"><g><rect></rect><text>Start</text></g></svg>';
  const svg = workbench.querySelector('svg')!;
  const style = document.createElement('style');
  style.innerHTML = `#${id} rect { fill: #ececff; }`;
  svg.insertBefore(style, svg.firstChild);
  svg.querySelector('rect')!.setAttribute('style', 'fill: #f96; stroke: #333 !important');
  await Promise.resolve();
  const markup = workbench.innerHTML;
  workbench.remove();
  return markup;
}

describe('renderUnderCsp', () => {
  it('keeps every style out of the markup and in the stylesheet, inline styles above the rest', async () => {
    const { svg, css } = await renderUnderCsp('dtest', () => mermaidLikeRender('dtest'));
    expect(svg).not.toMatch(/<style|\sstyle=/);
    expect(svg).toContain(`<rect ${STYLE_MARK}="0">`);
    expect(css).toBe(
      [
        '@layer inline-important, mermaid;',
        '@layer mermaid {\n#dtest rect { fill: #ececff; }\n}',
        `@layer inline-important {\n[${STYLE_MARK}="0"] { stroke: #333 !important; }\n}`,
        `[${STYLE_MARK}="0"] { fill: #f96; }`,
        '',
      ].join('\n'),
    );
  });

  it('puts the page back as it was', async () => {
    const setAttribute = Element.prototype.setAttribute;
    const createElement = document.createElement;
    await expect(renderUnderCsp('dfail', () => Promise.reject(new Error('Parse error on line 2')))).rejects.toThrow('Parse error on line 2');
    expect(Element.prototype.setAttribute).toBe(setAttribute);
    expect(document.createElement).toBe(createElement);
    expect(Object.hasOwn(document, "createElement")).toBe(false);
    expect(document.createElement('style')).toBeInstanceOf(HTMLStyleElement);
    expect(document.adoptedStyleSheets).toHaveLength(0);
  });
});

describe('svgImage', () => {
  it('makes a standalone SVG file with its stylesheet, size and words', async () => {
    const image = svgImage(await renderUnderCsp('dimage', () => mermaidLikeRender('dimage')));
    expect(image).toMatchObject({ width: 121, height: 80, alt: 'Diagram: Start' });
    const file = decodeURIComponent(image.src.replace(/^data:image\/svg\+xml;charset=utf-8,/, ''));
    expect(file).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*><style><!\[CDATA\[\n@layer inline-important, mermaid;/);
    expect(file).toMatch(/width="121" height="80"|height="80"[^>]*width="121"/);
  });
});
