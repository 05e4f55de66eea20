/** One dispatched server-sent event. `event` defaults to `message`, as in browsers. */
export interface SseEvent {
  event: string;
  data: string;
  /** The `id` field of this event, if it had one. */
  id?: string;
}

/**
 * Incremental `text/event-stream` parser (WHATWG rules): lines end in LF, CRLF or CR,
 * `data` lines join with LF, `:` lines are comments, a blank line dispatches. Text can be
 * pushed in arbitrary pieces, including a CRLF split across two pushes.
 */
export class SseParser {
  private buffer = '';
  private eventType = '';
  private dataLines: string[] = [];
  private hasData = false;
  private eventId: string | undefined;

  /** Feeds decoded text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      let end = -1;
      for (let i = start; i < this.buffer.length; i++) {
        const c = this.buffer.charCodeAt(i);
        if (c === 10 || c === 13) {
          end = i;
          break;
        }
      }
      if (end === -1) break;
      let next = end + 1;
      if (this.buffer.charCodeAt(end) === 13) {
        // A CR at the very end may be the first half of a CRLF: wait for more text.
        if (next === this.buffer.length) break;
        if (this.buffer.charCodeAt(next) === 10) next++;
      }
      const event = this.line(this.buffer.slice(start, end));
      if (event) events.push(event);
      start = next;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /**
   * The stream ended. Unlike the spec we also dispatch an event that lacked its final
   * blank line: a truncated terminal event is better delivered than lost.
   */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    const rest = this.buffer.endsWith('\r') ? this.buffer.slice(0, -1) : this.buffer;
    this.buffer = '';
    if (rest.length > 0) {
      const event = this.line(rest);
      if (event) events.push(event);
    }
    const last = this.dispatch();
    if (last) events.push(last);
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.eventId = value;
        break;
      default:
        // `retry` and unknown fields are ignored.
        break;
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const event: SseEvent | undefined = this.hasData
      ? { event: this.eventType || 'message', data: this.dataLines.join('\n') }
      : undefined;
    if (event && this.eventId !== undefined) event.id = this.eventId;
    this.eventType = '';
    this.dataLines = [];
    this.hasData = false;
    this.eventId = undefined;
    return event;
  }
}
