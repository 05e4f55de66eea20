import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  argumentsSummary,
  alwaysCovers,
  parseEditedArguments,
  progressAfter,
  progressText,
  toolOutput,
  toolPhase,
  type ToolPart,
  type ToolProgressByCall,
} from '../src/chat/tools';
import { ToolCard } from '../src/components/ToolCard';
import { ToolOutputView } from '../src/components/ToolOutputView';

const call = (state: ToolPart['state'], extra: Partial<ToolPart> = {}): ToolPart => ({
  type: 'dynamic-tool',
  toolName: 'write_file',
  toolCallId: 'call-1',
  state,
  input: { path: 'notes.md', content: 'hello' },
  ...extra,
});

describe('toolPhase', () => {
  it("names every state in the user's words", () => {
    expect(toolPhase(call('input-streaming'))).toBe('running');
    expect(toolPhase(call('input-available'))).toBe('running');
    expect(toolPhase(call('approval-requested', { approval: { id: 'a' } }))).toBe('waiting');
    expect(toolPhase(call('approval-responded', { approval: { id: 'a', approved: true } }))).toBe('running');
    expect(toolPhase(call('approval-responded', { approval: { id: 'a', approved: false } }))).toBe('denied');
    expect(toolPhase(call('output-available', { output: { content: [{ type: 'text', text: 'ok' }] } }))).toBe('done');
    expect(toolPhase(call('output-available', { output: { content: [{ type: 'text', text: 'no' }], isError: true } }))).toBe('failed');
    expect(toolPhase(call('output-error', { errorText: 'boom' }))).toBe('failed');
    expect(toolPhase(call('output-denied'))).toBe('denied');
  });

  it('a call without a result in a reply that is not being written has not run (an allowed one waits for the others)', () => {
    expect(toolPhase(call('input-available'), false)).toBe('queued');
    expect(toolPhase(call('approval-responded', { approval: { id: 'a', approved: true } }), false)).toBe('allowed');
  });
});

describe('toolOutput', () => {
  it('accepts text, image and resource content and refuses other shapes', () => {
    const output = {
      content: [
        { type: 'text', text: 'a' },
        { type: 'image', mimeType: 'image/png', data: 'AAAA' },
        { type: 'resource', uri: 'file:///x', text: 'x' },
      ],
      truncatedForModel: true,
    };
    expect(toolOutput(output)).toBe(output);
    expect(toolOutput({ hits: 2 })).toBeUndefined();
    expect(toolOutput({ content: [{ type: 'video' }] })).toBeUndefined();
    expect(toolOutput('text')).toBeUndefined();
  });
});

describe('ToolCard', () => {
  it('audit_followup_c_an_input_that_was_not_json_shows_as_the_text_the_model_sent', () => {
    const part: ToolPart = {
      type: 'dynamic-tool',
      toolName: 'write_file',
      toolCallId: 'c1',
      state: 'output-error',
      input: 'write notes.md <- hello',
      errorText: 'the arguments are not valid JSON',
    };
    const html = renderToStaticMarkup(createElement(ToolCard, { part, isLive: false }));
    expect(html).toContain('<pre>write notes.md &lt;- hello</pre>');
    expect(html).not.toContain('&quot;write notes.md');
    const json: ToolPart = { ...part, input: { path: 'notes.md' } };
    expect(renderToStaticMarkup(createElement(ToolCard, { part: json, isLive: false }))).toContain(
      '<pre>{\n  &quot;path&quot;: &quot;notes.md&quot;\n}</pre>',
    );
  });
});

describe('ToolOutputView', () => {
  it('shows the whole of a result the model saw only the beginning of, and says so', () => {
    // As the backend sends it: the full text, flagged as cut for the model.
    const long = 'x'.repeat(120_000) + 'END';
    const html = renderToStaticMarkup(createElement(ToolOutputView, { output: { content: [{ type: 'text', text: long }], isError: false, truncatedForModel: true } }));
    expect(html).toContain(long);
    expect(html).toContain('data-testid="tool-truncated"');
    expect(html).toContain('the model saw only the beginning');
    const whole = renderToStaticMarkup(createElement(ToolOutputView, { output: { content: [{ type: 'text', text: 'short' }], isError: false, truncatedForModel: false } }));
    expect(whole).not.toContain('tool-truncated');
  });
});

describe('argumentsSummary', () => {
  it('lists the arguments on one line and cuts it to the length asked', () => {
    expect(argumentsSummary({ path: 'notes.md', content: 'two\nlines' })).toBe('path: "notes.md", content: "two\\nlines"');
    const long = argumentsSummary({ content: 'x'.repeat(200) }, 20);
    expect(long).toHaveLength(20);
    expect(long.endsWith('…')).toBe(true);
    expect(argumentsSummary(undefined)).toBe('');
  });
});

describe('progressAfter', () => {
  const progress = (data: unknown) => ({ type: 'data-tool-progress' as const, id: 'call-1', data: data as never, transient: true });

  it('keeps the latest progress per call until the call has a result', () => {
    let state: ToolProgressByCall = new Map();
    state = progressAfter(state, progress({ toolCallId: 'call-1', progress: 1, total: 4, message: 'reading' }));
    state = progressAfter(state, progress({ toolCallId: 'call-1', progress: 3, total: 4, message: 'reading' }));
    expect(state.get('call-1')).toEqual({ progress: 3, total: 4, message: 'reading' });
    expect(progressText(state.get('call-1')!)).toBe('3 of 4 — reading');
    const same = progressAfter(state, { type: 'text-delta', id: 't1', delta: 'x' });
    expect(same).toBe(state);
    state = progressAfter(state, { type: 'tool-output-available', toolCallId: 'call-1', output: null });
    expect(state.has('call-1')).toBe(false);
  });

  it('ignores progress it cannot read', () => {
    const empty: ToolProgressByCall = new Map();
    expect(progressAfter(empty, progress({ toolCallId: 'call-1' }))).toBe(empty);
    expect(progressAfter(empty, progress('nonsense'))).toBe(empty);
  });
});

describe('parseEditedArguments', () => {
  it('takes a JSON object and explains anything else', () => {
    expect(parseEditedArguments('{"path": "b.md"}')).toEqual({ value: { path: 'b.md' } });
    expect(parseEditedArguments('{"path": ')).toMatchObject({ error: expect.stringMatching(/not valid JSON/) });
    expect(parseEditedArguments('[1, 2]')).toMatchObject({ error: expect.stringMatching(/JSON object/) });
    expect(parseEditedArguments('null')).toMatchObject({ error: expect.stringMatching(/JSON object/) });
  });
});

describe('alwaysCovers', () => {
  it('audit 05: an "Always" for fetch_url names the host it opens, other tools none', () => {
    expect(alwaysCovers('fetch_url', { url: 'http://user@Router.LAN:8080/admin' })).toBe('router.lan');
    expect(alwaysCovers('fetch_url', { url: 'http://[::1]/' })).toBe('[::1]');
    expect(alwaysCovers('fetch_url', { url: 'not a url' })).toBe('not a url');
    expect(alwaysCovers('write_file', { path: 'a.md' })).toBeUndefined();
  });
});
