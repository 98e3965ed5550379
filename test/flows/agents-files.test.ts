import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { rawV1, startSdkSvc, type SdkSvc } from '../support/agents-sdk.ts';
import { backends, startOn } from '../support/backends.ts';

const bytes = (n: number, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) % 256);

describe.each(backends)('the Files resource through the openai SDK on $name', (backend) => {
  let t: SdkSvc;
  beforeAll(async () => {
    t = await startOn(backend, (url) => startSdkSvc({ DATABASE_URL: url }));
  });
  afterAll(() => t?.stop());

  it('uploads a file and downloads the same bytes', async () => {
    const content = bytes(70_000);
    const file = await t.client.files.create({ file: await toFile(content, 'data.bin'), purpose: 'assistants' });
    expect(file).toEqual({ id: expect.stringMatching(/^file-/), bytes: 70_000, created_at: expect.any(Number), filename: 'data.bin', object: 'file', purpose: 'assistants', status: 'processed' });
    expect(Math.abs(file.created_at - Date.now() / 1000)).toBeLessThan(60);
    const res = await t.client.files.content(file.id);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(content);
    expect(await t.client.files.retrieve(file.id)).toEqual(file);
  });

  it('sets expires_at from expires_after and refuses windows outside 3600..2592000 seconds', async () => {
    const file = await t.client.files.create({ file: await toFile(bytes(10), 'short.txt'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 3600 } });
    expect(file.expires_at).toBe(file.created_at + 3600);
    const err = await t.client.files.create({ file: await toFile(bytes(10), 'x.txt'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 60 } }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('expires_after[seconds]');
  });

  it('rejects an unknown purpose and a missing file with 400 naming the parameter', async () => {
    const err = await t.client.files.create({ file: await toFile(bytes(3), 'a.txt'), purpose: 'nonsense' as 'assistants' }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('purpose');
    const form = new FormData();
    form.append('purpose', 'assistants');
    const res = await t.svc.api('/v1/files', { method: 'POST', body: form });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param: 'file' });
  });

  it('lists with auto-pagination across pages, newest first, filtered by purpose', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.client.files.create({ file: await toFile(bytes(5, i), `batch-${i}.jsonl`), purpose: 'batch' })).id);
    const seen: string[] = [];
    for await (const f of t.client.files.list({ purpose: 'batch', limit: 2 })) seen.push(f.id);
    expect(seen).toEqual([...ids].reverse());
    const asc: string[] = [];
    for await (const f of t.client.files.list({ purpose: 'batch', limit: 2, order: 'asc' })) asc.push(f.id);
    expect(asc).toEqual(ids);
    const page = await t.client.files.list({ purpose: 'batch', limit: 2 });
    expect(page.has_more).toBe(true);
  });

  it('deletes a file: FileDeleted has object "file" and deleted true (§8 item 23), then 404', async () => {
    const file = await t.client.files.create({ file: await toFile(bytes(4), 'gone.txt'), purpose: 'assistants' });
    expect(await t.client.files.delete(file.id)).toEqual({ id: file.id, deleted: true, object: 'file' });
    await expect(t.client.files.retrieve(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.client.files.content(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('files.waitForProcessing returns at once because ready files are processed (§8 item 24)', async () => {
    const file = await t.client.files.create({ file: await toFile(bytes(4), 'ready.txt'), purpose: 'assistants' });
    const started = Date.now();
    const done = await t.client.files.waitForProcessing(file.id, { pollInterval: 10_000 });
    expect(done.status).toBe('processed');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("hides another organisation's files (404) and refuses viewer uploads (403)", async () => {
    const file = await t.client.files.create({ file: await toFile(bytes(4), 'mine.txt'), purpose: 'assistants' });
    await expect(t.other.files.retrieve(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.other.files.delete(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const theirs: string[] = [];
    for await (const f of t.other.files.list()) theirs.push(f.id);
    expect(theirs).not.toContain(file.id);
    await expect(t.viewer.files.create({ file: await toFile(bytes(4), 'v.txt'), purpose: 'assistants' })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((await t.viewer.files.retrieve(file.id)).id).toBe(file.id);
  });

  it('serves /files without the OpenAI-Beta header and treats an empty purpose filter as absent (§8 items 14, 22)', async () => {
    const listed = await rawV1(t.svc, '/files?purpose=&limit=1');
    expect(listed.status).toBe(200);
    expect(listed.json).toMatchObject({ object: 'list', data: [expect.objectContaining({ object: 'file' })], has_more: true });
  });
});
