// Loaded on demand with the mermaid plugin (see `markdownPlugins.ts`): mermaid is the
// largest of the plugins.
import { createMermaidPlugin } from '@streamdown/mermaid';
import { renderUnderCsp, type UnstyledSvg } from './mermaidUnderCsp';

/** A drawn diagram: an SVG document as a `data:` URL, to show in an `<img>`. */
export interface MermaidImage {
  src: string;
  width: number;
  height: number;
  /** What the diagram says in words (its title and labels), for the image's `alt`. */
  alt: string;
}

// Labels as SVG text, not HTML in a <foreignObject>: an SVG image shows them in every
// engine, and they are measured in the same font the image draws them in.
const mermaid = createMermaidPlugin({ config: { fontFamily: 'system-ui, sans-serif', htmlLabels: false, flowchart: { htmlLabels: false } } });
/** Mermaid lays a diagram out in `<div id="d{id}">` at the end of <body> (styles.css keeps it off screen). */
const ID_PREFIX = 'colloquy-mermaid-';
const CACHED = 32;
const cache = new Map<string, Promise<MermaidImage>>();
/** The images in `cache` that are drawn, to show at once. */
const drawnImages = new Map<string, MermaidImage>();
let queue: Promise<unknown> = Promise.resolve();
let drawn = 0;

const cacheKey = (source: string, dark: boolean) => `${+dark}${source}`;

/**
 * Draws `source` in mermaid's light or dark theme. Rejects with mermaid's own message
 * (which says where the source is wrong) when it cannot. The last few results are kept:
 * a message scrolled back into view shows its diagram at once (`drawnMermaid`).
 */
export function drawMermaid(source: string, dark: boolean): Promise<MermaidImage> {
  const key = cacheKey(source, dark);
  let image = cache.get(key);
  if (image) {
    cache.delete(key);
  } else {
    // Mermaid's configuration is global and a render awaits: one diagram at a time.
    image = queue.then(() => draw(source, dark));
    queue = image.catch(() => undefined);
    image.then(
      (drawnImage) => cache.has(key) && drawnImages.set(key, drawnImage),
      () => undefined,
    );
  }
  cache.set(key, image);
  for (const old of cache.keys()) {
    if (cache.size <= CACHED) break;
    cache.delete(old);
    drawnImages.delete(old);
  }
  return image;
}

/** The image of `source` if it was drawn lately. */
export function drawnMermaid(source: string, dark: boolean): MermaidImage | undefined {
  return drawnImages.get(cacheKey(source, dark));
}

async function draw(source: string, dark: boolean): Promise<MermaidImage> {
  const instance = mermaid.getMermaid({ theme: dark ? 'dark' : 'default' });
  drawn += 1;
  const id = `${ID_PREFIX}${drawn}`;
  return svgImage(await renderUnderCsp(`d${id}`, async () => (await instance.render(id, source)).svg));
}

/**
 * Mermaid's diagram as a standalone SVG image: its stylesheet inside it (where the page's
 * CSP does not reach, and an image runs no script), its size from its view box, and
 * serialized as XML, which an SVG file must be.
 */
export function svgImage({ svg: markup, css }: UnstyledSvg): MermaidImage {
  // The markup has no style in it (see `renderUnderCsp`), so parsing it reports nothing
  // to the CSP; the stylesheet is added to the text afterwards, for the same reason.
  const svg = new DOMParser().parseFromString(markup, 'text/html').querySelector('svg');
  if (!svg) throw new Error('Mermaid drew no SVG.');
  const [, , viewWidth = 0, viewHeight = 0] = (svg.getAttribute('viewBox') ?? '').split(/[\s,]+/).map(Number);
  if (!(viewWidth > 0 && viewHeight > 0)) throw new Error('Mermaid drew an SVG without a size.');
  const width = Math.ceil(viewWidth);
  const height = Math.ceil(viewHeight);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  const alt = describe(svg);
  const xml = new XMLSerializer().serializeToString(svg);
  const openTag = /^<svg\b(?:[^>"']|"[^"]*"|'[^']*')*>/.exec(xml);
  if (!openTag) throw new Error('Mermaid drew no SVG.');
  const style = `<style><![CDATA[\n${css.replaceAll(']]>', ']]]]><![CDATA[>')}]]></style>`;
  const document = openTag[0] + style + xml.slice(openTag[0].length);
  return { src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(document)}`, width, height, alt };
}

function describe(svg: SVGSVGElement): string {
  const title = svg.querySelector(':scope > title')?.textContent?.trim();
  const labels = new Set<string>();
  for (const text of svg.querySelectorAll('text')) {
    const label = text.textContent?.replace(/\s+/g, ' ').trim();
    if (label) labels.add(label);
  }
  const name = title || 'Diagram';
  return labels.size > 0 ? `${name}: ${[...labels].join(', ')}` : name;
}
