import { createHighlighterCore, type GrammarState, type HighlighterCore, type ThemedToken } from 'shiki/core';
import { createJavaScriptRegexEngine } from 'shiki/engine/javascript';
import { bundledLanguages } from 'shiki/langs';
import githubDark from 'shiki/themes/github-dark.mjs';
import githubLight from 'shiki/themes/github-light.mjs';
import { THEMES, type Tokens } from './highlightJobs';

// Code blocks to coloured tokens with Shiki, in the code highlighter's worker (see
// `codeHighlighter.ts`; what the two exchange is in `highlightJobs.ts`). Only the two
// themes the app shows are built in; each language's grammar is its own chunk, loaded
// the first time a block uses it.

/** Where an earlier highlight of a growing block ended: its complete lines and the state after them. */
interface Resume {
  language: string;
  /** The code up to and including its last line break. */
  prefix: string;
  rows: ThemedToken[][];
  state: GrammarState | undefined;
}

/** Blocks whose progress is kept (a few replies may stream code at once). */
const RESUMES = 8;

export class CodeTokenizer {
  private highlighter: Promise<HighlighterCore> | undefined;
  /** Newest first. */
  private resumes: Resume[] = [];
  /** Languages whose grammar failed to load: shown as plain text, not tried again. */
  private broken = new Set<string>();

  /**
   * The block's tokens in both themes. A block that grows (streaming) is tokenized from
   * where its last complete line ended, so each chunk costs its own lines, not the block's.
   */
  async tokens(code: string, language: string): Promise<Tokens> {
    const highlighter = await (this.highlighter ??= createHighlighterCore({
      themes: [githubLight, githubDark],
      langs: [],
      engine: createJavaScriptRegexEngine({ forgiving: true }),
    }));
    const lang = await this.load(highlighter, language);
    const themes = { light: THEMES[0], dark: THEMES[1] };
    const resume = this.take(lang, code);
    let { rows, state } = resume ?? { rows: [] as ThemedToken[][], state: undefined };
    let done = resume?.prefix.length ?? 0;
    const lines = code.lastIndexOf('\n') + 1;
    if (lines > done) {
      const more = highlighter.codeToTokens(code.slice(done, lines), { lang, themes, grammarState: state });
      // The text ends with a line break: Shiki gives an empty line after it.
      const added = more.tokens.slice(0, -1);
      shift(added, done);
      rows = rows.concat(added);
      state = more.grammarState;
      done = lines;
    }
    if (done > 0) this.keep({ language: lang, prefix: code.slice(0, done), rows, state });
    const tail = highlighter.codeToTokens(code.slice(done), { lang, themes, grammarState: state });
    shift(tail.tokens, done);
    return { tokens: rows.concat(tail.tokens), fg: tail.fg, bg: tail.bg, themeName: tail.themeName, rootStyle: tail.rootStyle };
  }

  /** The language's id once its grammar is loaded; `text` for one Shiki does not know. */
  private async load(highlighter: HighlighterCore, language: string): Promise<string> {
    const name = language.trim().toLowerCase();
    if (highlighter.getLoadedLanguages().includes(name)) return name;
    const grammar = Object.hasOwn(bundledLanguages, name) ? bundledLanguages[name as keyof typeof bundledLanguages] : undefined;
    if (!grammar || this.broken.has(name)) return 'text';
    try {
      await highlighter.loadLanguage(grammar);
      return name;
    } catch {
      this.broken.add(name);
      return 'text';
    }
  }

  private take(language: string, code: string): Resume | undefined {
    const at = this.resumes.findIndex((resume) => resume.language === language && code.startsWith(resume.prefix));
    return at < 0 ? undefined : this.resumes.splice(at, 1)[0];
  }

  private keep(resume: Resume): void {
    this.resumes.unshift(resume);
    if (this.resumes.length > RESUMES) this.resumes.pop();
  }
}

function shift(rows: ThemedToken[][], by: number): void {
  if (by === 0) return;
  for (const row of rows) for (const token of row) token.offset += by;
}
