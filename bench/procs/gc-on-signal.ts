/**
 * Preloaded (`node --expose-gc --import bench/procs/gc-on-signal.ts …`) into a process whose memory a benchmark
 * measures: on SIGUSR2 it runs a full garbage collection and prints `bench-memory <json of process.memoryUsage()>`, so
 * the figures count what the process retains rather than how much garbage it has not collected yet.
 */
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.();
  process.stdout.write(`bench-memory ${JSON.stringify(process.memoryUsage())}\n`);
});
