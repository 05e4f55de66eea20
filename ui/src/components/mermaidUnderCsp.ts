/** Stands in the serialized SVG for an element's inline style (see `renderUnderCsp`). */
export const STYLE_MARK = 'data-colloquy-style';

/** A diagram's markup without any style in it, and the stylesheet that styles it. */
export interface UnstyledSvg {
  svg: string;
  css: string;
}

let active = false;

/**
 * Runs `render` (mermaid's, which lays the diagram out in a `<div id={workbenchId}>` in
 * the page and returns that div's `innerHTML`) so that the page's Content Security Policy
 * (`style-src 'self'`) has nothing to block or report. Mermaid styles what it draws with
 * `style` attributes and a `<style>` element, and its sanitizer parses the SVG it made
 * with the page's HTML parser again; all of that is inline style to the CSP. The CSSOM is
 * not, so while `render` runs:
 * - `setAttribute('style', css)` sets `element.style.cssText` (the same style, set through
 *   the CSSOM);
 * - `document.createElement('style')` returns a fragment that keeps the CSS written into
 *   it (and inserts nothing): a constructed stylesheet the document adopts applies it;
 * - reading the workbench's `innerHTML` first moves every inline style under it into a
 *   rule for a `STYLE_MARK` attribute, so the markup carries no style at all.
 * The returned `css` styles the returned markup as mermaid's would have: its stylesheet is
 * in a cascade layer, so the rules for former inline styles beat it whatever their
 * specificity, as inline styles beat any rule (normal declarations unlayered, which beat
 * layered ones; `!important` ones in a layer before mermaid's, whose `!important`
 * declarations beat those of later layers).
 * The patches are on while `render` awaits, so other code running meanwhile gets them too;
 * the only difference it could notice is a `<style>` element it creates.
 */
export async function renderUnderCsp(workbenchId: string, render: () => Promise<string>): Promise<UnstyledSvg> {
  if (active) throw new Error('renderUnderCsp does not nest');
  active = true;
  const stylesheets: string[] = [];
  const inline: InlineRules = { normal: [], important: [] };
  const adopted = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, adopted];

  const setAttribute = Element.prototype.setAttribute;
  const createElement = document.createElement;
  const ownCreateElement = Object.getOwnPropertyDescriptor(document, 'createElement');
  const innerHTML = Object.getOwnPropertyDescriptor(Element.prototype, 'innerHTML');
  let throughCssom = false;
  Element.prototype.setAttribute = function (this: Element, name: string, value: string) {
    // A DOM may implement `cssText` with `setAttribute` (happy-dom does): once is enough.
    if (!throughCssom && name.toLowerCase() === 'style' && (this instanceof HTMLElement || this instanceof SVGElement)) {
      throughCssom = true;
      try {
        this.style.cssText = String(value);
      } finally {
        throughCssom = false;
      }
    } else {
      setAttribute.call(this, name, value);
    }
  };
  // On the page's document itself, which is what mermaid calls (a DOM may define the
  // method on a prototype below Document's).
  document.createElement = function (this: Document, tagName: string, options?: ElementCreationOptions) {
    if (tagName.toLowerCase() !== 'style') return createElement.call(this, tagName, options);
    const index = stylesheets.push('') - 1;
    return stylesheetCatcher(this, (css) => {
      stylesheets[index] = css;
      try {
        adopted.replaceSync(stylesheets.join('\n'));
      } catch {
        // CSS the browser cannot read: the diagram is laid out without it.
      }
    });
  } as typeof document.createElement;
  if (innerHTML?.get) {
    const read = innerHTML.get;
    Object.defineProperty(Element.prototype, 'innerHTML', {
      ...innerHTML,
      get(this: Element) {
        if (this.id === workbenchId) moveInlineStyles(this, inline);
        return read.call(this);
      },
    });
  }
  try {
    const svg = await render();
    const css = [
      '@layer inline-important, mermaid;',
      `@layer mermaid {\n${stylesheets.join('\n')}\n}`,
      `@layer inline-important {\n${inline.important.join('\n')}\n}`,
      ...inline.normal,
    ];
    return { svg, css: `${css.join('\n')}\n` };
  } finally {
    Element.prototype.setAttribute = setAttribute;
    if (ownCreateElement) Object.defineProperty(document, 'createElement', ownCreateElement);
    else delete (document as Partial<Document>).createElement;
    if (innerHTML) Object.defineProperty(Element.prototype, 'innerHTML', innerHTML);
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((sheet) => sheet !== adopted);
    active = false;
  }
}

/** What `createElement('style')` returns: a fragment that hands the text written into it to `onCss`. */
function stylesheetCatcher(owner: Document, onCss: (css: string) => void): DocumentFragment {
  const fragment = owner.createDocumentFragment();
  let text = '';
  for (const name of ['textContent', 'innerHTML']) {
    Object.defineProperty(fragment, name, {
      get: () => text,
      set: (value: unknown) => {
        text = String(value ?? '');
        onCss(text);
      },
    });
  }
  return fragment;
}

interface InlineRules {
  normal: string[];
  important: string[];
}

/** Replaces each `style` attribute under `root` by a `STYLE_MARK` and rules for it. */
function moveInlineStyles(root: Element, rules: InlineRules): void {
  let marks = rules.normal.length + rules.important.length;
  for (const element of root.querySelectorAll<HTMLElement | SVGElement>('[style]')) {
    const normal: string[] = [];
    const important: string[] = [];
    for (const name of Array.from(element.style)) {
      const declaration = `${name}: ${element.style.getPropertyValue(name)}`;
      if (element.style.getPropertyPriority(name) === 'important') important.push(`${declaration} !important;`);
      else normal.push(`${declaration};`);
    }
    element.removeAttribute('style');
    if (normal.length + important.length === 0) continue;
    const selector = `[${STYLE_MARK}="${marks}"]`;
    element.setAttribute(STYLE_MARK, String(marks));
    marks += 1;
    if (normal.length > 0) rules.normal.push(`${selector} { ${normal.join(' ')} }`);
    if (important.length > 0) rules.important.push(`${selector} { ${important.join(' ')} }`);
  }
}
