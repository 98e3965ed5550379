import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { encodeSseComment, encodeSseFrame, sseResponse } from './sse.ts';

/**
 * The one SSE encoder of the conductor run stream and the /v1 session event stream: the bytes clients of both
 * already read (`event:`, `data:` lines, then `id:`; keep-alives as `: keep-alive` comments).
 */
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('SSE encoding', () => {
  it('writes event, data lines and id in the order both streams have always sent', () => {
    expect(text(encodeSseFrame({ id: 'evt_7', event: 'agent.session.idle', data: '{"a":1}' }))).toBe('event: agent.session.idle\ndata: {"a":1}\nid: evt_7\n\n');
    expect(text(encodeSseFrame({ id: '3', data: '{"type":"result"}' }))).toBe('data: {"type":"result"}\nid: 3\n\n');
    expect(text(encodeSseFrame({ data: 'two\nlines' }))).toBe('data: two\ndata: lines\n\n');
    expect(text(encodeSseComment('keep-alive'))).toBe(': keep-alive\n\n');
  });

  it('streams items as frames and keep-alive ticks as comments, with the SSE headers, and ends with its source', async () => {
    async function* items() {
      yield { seq: 1, type: 'assistant' };
      yield null;
      yield { seq: 2, type: 'result' };
    }
    const app = new Hono().get('/stream', (c) => sseResponse(c, items(), (e) => ({ id: String(e.seq), event: e.type, data: JSON.stringify(e) }), new AbortController()));
    const res = await app.request('/stream');
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(await res.text()).toBe(
      'event: assistant\ndata: {"seq":1,"type":"assistant"}\nid: 1\n\n: keep-alive\n\nevent: result\ndata: {"seq":2,"type":"result"}\nid: 2\n\n',
    );
  });
});
