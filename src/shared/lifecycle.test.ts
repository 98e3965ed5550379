import { describe, expect, it } from 'vitest';
import { startSideBySide, type Lifecycle } from './lifecycle.ts';

describe('startSideBySide', () => {
  const part = (log: string[], name: string, fails = false): Lifecycle => ({
    async start() {
      log.push(`start ${name}`);
      if (fails) throw new Error(`${name} failed`);
    },
    async stop() {
      log.push(`stop ${name}`);
    },
  });

  it('starts every part and stops none when all start', async () => {
    const log: string[] = [];
    await startSideBySide([part(log, 'a'), part(log, 'b')]);
    expect(log).toEqual(['start a', 'start b']);
  });

  it('stops the parts that started when one fails, then throws its failure', async () => {
    const log: string[] = [];
    await expect(startSideBySide([part(log, 'a'), part(log, 'b', true), part(log, 'c')])).rejects.toThrow('b failed');
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop a', 'stop c']);
  });
});
