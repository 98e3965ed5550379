import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasTranscript, transcriptFiles, transcriptSessionId } from './transcript.ts';
import { toolNameOf } from './translate.ts';

const SID = '0b9a3f0e-2d7c-4a7e-9a52-3c1d2e4f5a6b';
const OTHER = '11111111-2222-4333-8444-555555555555';
const file = (path: string) => ({ path, data: new TextEncoder().encode('{}\n') });

describe('Claude transcripts', () => {
  const config = mkdtempSync(join(tmpdir(), 'svc-transcript-'));
  afterAll(() => rmSync(config, { recursive: true, force: true }));

  it('exports the session transcript and its subagent folder, from any project folder, without following links', async () => {
    mkdirSync(join(config, 'projects', '-srv-work', SID, 'subagents'), { recursive: true });
    writeFileSync(join(config, 'projects', '-srv-work', `${SID}.jsonl`), 'main\n');
    writeFileSync(join(config, 'projects', '-srv-work', SID, 'subagents', 'agent-1.jsonl'), 'sub\n');
    writeFileSync(join(config, 'projects', '-srv-work', `${OTHER}.jsonl`), 'other session\n');
    symlinkSync('/etc/passwd', join(config, 'projects', '-srv-work', SID, 'passwd'));

    const files = await transcriptFiles(config, SID);
    expect(files.map((f) => f.path).sort()).toEqual([`projects/-srv-work/${SID}.jsonl`, `projects/-srv-work/${SID}/subagents/agent-1.jsonl`]);
    expect(await hasTranscript(config, SID)).toBe(true);
    expect(await hasTranscript(config, '99999999-2222-4333-8444-555555555555')).toBe(false);
  });

  it('accepts a bundle of one session and names it', () => {
    expect(transcriptSessionId([file(`projects/-any/${SID}.jsonl`), file(`projects/-any/${SID}/subagents/a.jsonl`)])).toBe(SID);
  });

  it.each([
    ['a file outside projects/', [file(`${SID}.jsonl`)], /unexpected entry/],
    ['a name that is not a session uuid', [file('projects/p/notes.jsonl')], /unexpected entry/],
    ['two sessions', [file(`projects/p/${SID}.jsonl`), file(`projects/p/${OTHER}.jsonl`)], /mixes 2 sessions/],
    ['a subagent folder without its transcript', [file(`projects/p/${SID}/subagents/a.jsonl`)], /exactly one transcript/],
  ])('refuses a bundle with %s', (_label, files, pattern) => {
    expect(() => transcriptSessionId(files)).toThrow(pattern);
  });

  it('names tools as the general runtime does', () => {
    const servers = [
      { name: 'svc', url: 'http://a', headers: undefined, transport: 'http' as const, toolPrefix: '' },
      { name: 'bare', url: 'http://b', headers: undefined, transport: 'http' as const, toolPrefix: '' },
    ];
    expect(toolNameOf('mcp__svc__echo', servers)).toBe('echo');
    expect(toolNameOf('mcp__ext__read_file', servers)).toBe('ext__read_file');
    expect(toolNameOf('mcp__bare__read', servers)).toBe('read');
    expect(toolNameOf('Bash', servers)).toBe('Bash');
  });
});
