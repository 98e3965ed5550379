import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { unzipSync, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { compressibleBytes, craftZip, lyingZip } from '../../../test/support/zip.ts';
import { ARCHIVE_CHANNEL, readZip, UPLOAD_ARCHIVE_LIMITS, writeZip, type ArchiveLimits, type ArchiveProgress } from './index.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const MiB = 1024 * 1024;

async function refusal(bytes: Uint8Array, limits: ArchiveLimits = UPLOAD_ARCHIVE_LIMITS) {
  try {
    await readZip(bytes, { field: 'files', limits });
  } catch (err) {
    const e = err as { status: number; code: string; message: string };
    return { status: e.status, code: e.code, message: e.message };
  }
  throw new Error('the archive was accepted');
}

/** What the reader inflated before it answered, from its own progress messages. */
async function inflatedWhile<T>(work: () => Promise<T>): Promise<number> {
  let inflated = 0;
  const listener = (m: unknown) => {
    if ((m as ArchiveProgress).event === 'end') inflated = (m as ArchiveProgress).inflatedBytes;
  };
  subscribe(ARCHIVE_CHANNEL, listener);
  try {
    await work().catch(() => undefined);
  } finally {
    unsubscribe(ARCHIVE_CHANNEL, listener);
  }
  return inflated;
}

describe('reading a zip', () => {
  it('returns the regular files byte for byte, with the execute bit, skipping folders', async () => {
    const bin = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256);
    const zip = craftZip([
      { name: 'skill/', mode: 0o040755 },
      { name: 'skill/SKILL.md', data: enc('---\nname: a\n---\n') },
      { name: 'skill/run.sh', data: enc('echo hi\n'), mode: 0o100755 },
      { name: 'skill/data.bin', data: bin, method: 0 },
      { name: 'skill/./lib//x.py', data: enc('print(1)\n') },
    ]);
    expect(await readZip(zip, { field: 'files' })).toEqual([
      { path: 'skill/SKILL.md', content: enc('---\nname: a\n---\n'), executable: false },
      { path: 'skill/run.sh', content: enc('echo hi\n'), executable: true },
      { path: 'skill/data.bin', content: bin, executable: false },
      { path: 'skill/lib/x.py', content: enc('print(1)\n'), executable: false },
    ]);
  });

  it('reads an empty file stored as deflated with no bytes at all, as some writers do', async () => {
    const zip = craftZip([{ name: 'empty', data: new Uint8Array(0), deflated: new Uint8Array(0) }]);
    expect(await readZip(zip, { field: 'files' })).toEqual([{ path: 'empty', content: new Uint8Array(0), executable: false }]);
  });

  it('reads what an ordinary zip tool writes (fflate, DOS attributes)', async () => {
    const files = await readZip(zipSync({ 'a/b.txt': enc('b'), 'c.txt': enc('c') }), { field: 'files' });
    expect(files.map((f) => f.path)).toEqual(['a/b.txt', 'c.txt']);
  });

  it('stops the 4 MiB zip that declares 100 bytes per entry and holds 4 GiB of zeros after a few MiB', async () => {
    const bomb = lyingZip({ entries: 4096, entryBytes: MiB, data: new Uint8Array(MiB) });
    expect(bomb.byteLength).toBeLessThan(5 * MiB);
    let answer: Awaited<ReturnType<typeof refusal>> | undefined;
    const inflated = await inflatedWhile(async () => (answer = await refusal(bomb, { ...UPLOAD_ARCHIVE_LIMITS, entries: 5000 })));
    expect(answer).toMatchObject({ status: 413, code: 'archive_ratio', message: expect.stringMatching(/^files: the archive inflates more than 100:1 /) });
    expect(inflated).toBeLessThan(3 * MiB);
  });

  it('stops a bomb that stays under the ratio at the total limit, having inflated no more than it', async () => {
    // 70 entries of 1 MiB that deflate ~50:1, each declaring 100 bytes: 70 MiB real
    const bomb = lyingZip({ entries: 70, entryBytes: MiB });
    let answer: Awaited<ReturnType<typeof refusal>> | undefined;
    const inflated = await inflatedWhile(async () => (answer = await refusal(bomb)));
    expect(answer).toEqual({ status: 413, code: 'archive_total_bytes', message: 'files: the archive inflates past 64 MiB (67108864 bytes), the limit on total inflated bytes' });
    expect(inflated).toBeGreaterThan(64 * MiB);
    expect(inflated).toBeLessThan(65 * MiB);
  });

  it('stops a lying entry at the per-entry limit', async () => {
    const zip = craftZip([{ name: 'big.bin', data: compressibleBytes(3 * MiB), declaredSize: 100 }]);
    expect(await refusal(zip, { ...UPLOAD_ARCHIVE_LIMITS, entryBytes: 2 * MiB })).toEqual({ status: 413, code: 'archive_entry_bytes', message: 'files: entry "big.bin" inflates past 2 MiB (2097152 bytes), the limit per entry' });
  });

  it('stops an entry of zeros at the compression ratio', async () => {
    const zip = craftZip([{ name: 'zeros.bin', data: new Uint8Array(8 * MiB), declaredSize: 100 }]);
    const r = await refusal(zip);
    expect(r).toMatchObject({ status: 413, code: 'archive_ratio' });
    expect(r.message).toMatch(/^files: the archive inflates more than 100:1 .*over the limit on compression ratio$/);
  });

  it('refuses an honest archive over a limit from its declared sizes and count, before inflating anything', async () => {
    const tooMany = craftZip(Array.from({ length: 1001 }, (_, i) => ({ name: `f${i}`, data: enc('x') })));
    expect(await refusal(tooMany)).toEqual({ status: 413, code: 'archive_entries', message: 'files: the archive lists 1001 entries, over the limit of 1000' });
    const declaredBig = craftZip([{ name: 'a', data: enc('x'), declaredSize: 17 * MiB }]);
    expect(await inflatedWhile(() => refusal(declaredBig))).toBe(0);
    expect(await refusal(declaredBig)).toMatchObject({ status: 413, code: 'archive_entry_bytes', message: expect.stringContaining('declares more than 16 MiB') });
    const declaredTotal = craftZip(Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, data: enc('x'), declaredSize: 15 * MiB })));
    expect(await refusal(declaredTotal)).toMatchObject({ status: 413, code: 'archive_total_bytes', message: expect.stringContaining('declares more than 64 MiB') });
  });

  it.each([
    ['a parent segment', '../../etc/passwd', 'climbs out of the archive with ".."'],
    ['a parent segment inside', 'a/../../x', 'climbs out of the archive with ".."'],
    ['a backslash traversal', '..\\..\\windows\\x', 'climbs out of the archive with ".."'],
    ['an absolute path', '/etc/cron.d/x', 'is an absolute path'],
    ['a backslash absolute path', '\\server\\share\\x', 'is an absolute path'],
    ['a drive letter', 'C:/Windows/x', 'starts with a drive letter'],
    ['a drive letter with backslashes', 'c:\\x', 'starts with a drive letter'],
    ['a NUL byte', 'a\u0000b', 'holds a control character'],
    ['a newline', 'a\nb', 'holds a control character'],
  ])('refuses an entry name with %s (400)', async (_label, name, why) => {
    const r = await refusal(craftZip([{ name, data: enc('x') }]));
    expect(r).toMatchObject({ status: 400, code: 'archive_entry_name' });
    expect(r.message).toContain(why);
    expect(r.message).toMatch(/^files: entry "/);
  });

  it('refuses names deeper than the depth limit (400 naming it)', async () => {
    const r = await refusal(craftZip([{ name: `${'d/'.repeat(16)}x`, data: enc('x') }]));
    expect(r).toMatchObject({ status: 400, code: 'archive_depth', message: expect.stringContaining('17 levels deep, over the limit of 16 levels') });
  });

  it.each([
    ['a symbolic link', 0o120777, 'is a symbolic link'],
    ['a character device', 0o020644, 'is a device'],
    ['a block device', 0o060644, 'is a device'],
    ['a FIFO', 0o010644, 'is a fifo'],
    ['a socket', 0o140644, 'is a socket'],
  ])('refuses %s entry (400)', async (_label, mode, why) => {
    const r = await refusal(craftZip([{ name: 'SKILL.md', data: enc('x') }, { name: 'thing', data: enc('/etc/passwd'), mode }]));
    expect(r).toMatchObject({ status: 400, code: 'archive_entry_type', message: `files: entry "thing" ${why} (only regular files and folders are allowed)` });
  });

  it('refuses duplicate names, also when they differ only by separators', async () => {
    const r = await refusal(craftZip([{ name: 'a/b', data: enc('1') }, { name: 'a\\b', data: enc('2') }]));
    expect(r).toEqual({ status: 400, code: 'archive_entry_name', message: 'files: entry "a/b" appears more than once' });
  });

  it('answers bytes that are not a zip, and corrupt entry data, with 400 archive_invalid', async () => {
    expect(await refusal(enc('PK\u0003\u0004 broken'))).toMatchObject({ status: 400, code: 'archive_invalid', message: expect.stringMatching(/^files: not a readable zip archive/) });
    const corrupt = craftZip([{ name: 'a', data: enc('hello'), deflated: enc('\u00ff\u00ff\u00ff garbage') }]);
    expect(await refusal(corrupt)).toMatchObject({ status: 400, code: 'archive_invalid', message: expect.stringContaining('entry "a" is not valid compressed data') });
  });

  it('reads back what writeZip writes, as other zip tools do', async () => {
    const files = [{ path: 'a/SKILL.md', content: enc('---\nname: a\n---\n') }, { path: 'a/data.bin', content: compressibleBytes(300_000) }, { path: 'empty', content: new Uint8Array(0) }];
    const zip = await writeZip(files, new Date('2030-01-01T00:00:00Z'));
    expect((await readZip(zip, { field: 'files' })).map(({ path, content }) => ({ path, content }))).toEqual(files);
    expect(unzipSync(zip)).toEqual(Object.fromEntries(files.map((f) => [f.path, f.content])));
  });
});
