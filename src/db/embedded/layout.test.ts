import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import { connectionOf } from '../database.ts';
import { socketDirFor, socketUrl } from './layout.ts';

describe('how the embedded cluster is reached', () => {
  it('puts the socket in the cluster folder, or in a stable folder in tmp when that path is too long for a socket', () => {
    expect(socketDirFor('/home/me/.svc/pg')).toBe('/home/me/.svc/pg');
    const deep = `/srv/${'very-long-folder-name/'.repeat(5)}pg`;
    expect(socketDirFor(deep)).toMatch(new RegExp(`^${tmpdir()}/svc-pg-sock-[0-9a-f]{16}$`));
    expect(socketDirFor(deep)).toBe(socketDirFor(deep));
    expect(socketDirFor(deep + '2')).not.toBe(socketDirFor(deep));
  });

  it('prints a libpq URL that svc itself reads back as socket, role and database', () => {
    const url = socketUrl('/tmp/a b/pg', 'postgres', 'svc');
    expect(url).toBe('postgresql:///svc?host=/tmp/a%20b/pg&port=5432&user=postgres');
    expect(connectionOf(url)).toEqual({ host: '/tmp/a b/pg', port: 5432, user: 'postgres', password: undefined, database: 'svc' });
    expect(connectionOf('postgres://app:pw@db.example:6543/svc')).toBe('postgres://app:pw@db.example:6543/svc');
  });
});
