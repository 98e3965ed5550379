import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The young generation of a process under allocation load, with and without `limitHeap`: each in a Node process of
 * its own (V8's flags are per process, and this one is the test runner's).
 */
const HEAP = fileURLToPath(new URL('./heap.ts', import.meta.url));
function youngPeakMiB(limit: string, nodeArgs: string[] = []): number {
  const script = `
    import v8 from 'node:v8';
    const { limitHeap } = await import(${JSON.stringify(HEAP)});
    ${limit}
    // objects that live a little while (a run's), so that the young generation grows as it does under load
    let peak = 0;
    const live = [];
    for (let i = 0; i < 300_000; i++) {
      live.push({ i, s: 'x'.repeat(i % 64), a: [i, i + 1] });
      if (live.length > 50_000) live.splice(0, 10_000);
      if (i % 1000 === 0) await new Promise((r) => setImmediate(r)); // the gc observer runs between turns
      if (i % 1000 === 0) peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    }
    process.stdout.write(String(peak / 2 ** 20));
  `;
  return Number(execFileSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], { encoding: 'utf8' }));
}

describe('limitHeap', () => {
  // V8's own maximum depends on the machine's memory: each process is given a large one, 32 MiB per semi-space
  const roomy = ['--max-semi-space-size=32'];
  it('holds the young generation at its cap where V8 alone grows it further', () => {
    expect(youngPeakMiB('', roomy)).toBeGreaterThan(16);
    // `[]`: as if the maximum above were V8's default rather than the operator's flag
    expect(youngPeakMiB('limitHeap({ youngMiB: 8, growingPercent: 0 }, []);', roomy)).toBeLessThanOrEqual(16);
  });

  it("leaves the young generation alone when node's command line sizes it", () => {
    expect(youngPeakMiB('limitHeap({ youngMiB: 8, growingPercent: 0 });', roomy)).toBeGreaterThan(16);
  });
});
