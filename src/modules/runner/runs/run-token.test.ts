import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallError } from '../../../contracts/http-client.ts';
import type { RenewedRunToken } from '../../../contracts/run-callbacks.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import { keepRunTokenFresh } from './run-token.ts';

/**
 * The runner's side of run token rotation, on fake timers: which token each renewal presents and when, against a
 * conductor that answers as `answer` says (a fresh token of 30 s, or a failure). The runner reads a token's `iat` and
 * `exp` and never verifies it (the conductor does), so the tokens here carry those claims and a made-up signature.
 */
const TTL_S = 30;
let minted = 0;
const encode = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
function token(): string {
  const iat = Math.floor(Date.now() / 1000);
  return [encode({ alg: 'HS256' }), encode({ sub: 'run:run_1', iat, exp: iat + TTL_S, n: ++minted }), 'signature'].join('.');
}

let presented: Array<{ token: string; at: number }>;
let answer: () => Promise<RenewedRunToken>;
const conductor = {
  renewRunToken: async (token: string) => {
    presented.push({ token, at: Date.now() });
    return answer();
  },
};
const fresh = async (): Promise<RenewedRunToken> => ({ runToken: token(), expiresAt: new Date((Math.floor(Date.now() / 1000) + TTL_S) * 1000).toISOString() });
const session = async () => ({ id: 'sess_1', activeRunId: 'run_1', runToken: (await fresh()).runToken }) as SessionRecord;
const start = Date.UTC(2026, 10, 29, 4, 0, 0);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  vi.setSystemTime(start);
  presented = [];
  answer = fresh;
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a run token kept fresh', () => {
  it('is renewed a third of the way through each token’s life, and the run goes on with the fresh one', async () => {
    const rec = await session();
    const first = rec.runToken;
    const keeper = keepRunTokenFresh(conductor, rec);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(presented).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(presented).toEqual([{ token: first, at: start + 10_000 }]);
    expect(rec.runToken).not.toBe(first);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(presented.map((p) => p.at - start)).toEqual([10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000]);
    // each renewal presents the token the one before it answered
    expect(new Set(presented.map((p) => p.token)).size).toBe(7);
    keeper.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(presented).toHaveLength(7);
  });

  it('tries again while the token lasts when the conductor cannot be reached', async () => {
    const rec = await session();
    const first = rec.runToken;
    answer = () => Promise.reject(new CallError(undefined, 'conductor POST /api/runs/self/token: connection refused'));
    const keeper = keepRunTokenFresh(conductor, rec);
    await vi.advanceTimersByTimeAsync(16_000);
    expect(presented.map((p) => p.at - start)).toEqual([10_000, 13_000, 16_000]);
    answer = fresh;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(presented.map((p) => p.token)).toEqual([first, first, first, first]);
    expect(rec.runToken).not.toBe(first);
    keeper.stop();
  });

  it('stops once the conductor refuses (the run ended)', async () => {
    const rec = await session();
    answer = () => Promise.reject(new CallError(409, 'conductor POST /api/runs/self/token: run run_1 is ok, not running: its token is not renewed'));
    keepRunTokenFresh(conductor, rec);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(presented).toHaveLength(1);
  });

  it('follows a token that came otherwise (an approval’s decision), and renews that one in turn', async () => {
    const rec = await session();
    const keeper = keepRunTokenFresh(conductor, rec);
    await vi.advanceTimersByTimeAsync(5_000);
    const delivered = (rec.runToken = (await fresh()).runToken);
    await vi.advanceTimersByTimeAsync(5_000);
    // the renewal due now finds a newer token: it waits a third of that one's life
    expect(presented).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(presented).toEqual([{ token: delivered, at: start + 20_000 }]);
    keeper.stop();
  });
});
