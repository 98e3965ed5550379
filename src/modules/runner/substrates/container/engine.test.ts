import { describe, expect, it } from 'vitest';
import { demux, engineTarget, splitImage } from './engine.ts';
import { DEFAULT_LIMITS } from '../../../../contracts/sandbox-limits.ts';
import { engineDisk, hostConfigLimits, refusesStorageOpt } from './container-spec.ts';

const frame = (stream: 1 | 2, text: string) => {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

describe('the container engine client', () => {
  it('splits the multiplexed output of a command into stdout and stderr, whatever the chunking', () => {
    const wire = Buffer.concat([frame(1, 'hello '), frame(2, 'oops'), frame(1, 'world')]);
    for (const size of [1, 3, 8, 13, wire.length]) {
      const got: string[] = [];
      const feed = demux((stream, chunk) => got.push(`${stream}:${chunk}`));
      for (let i = 0; i < wire.length; i += size) feed(wire.subarray(i, i + size));
      expect(got.filter((g) => g.startsWith('1:')).map((g) => g.slice(2)).join('')).toBe('hello world');
      expect(got.filter((g) => g.startsWith('2:')).map((g) => g.slice(2)).join('')).toBe('oops');
    }
  });

  it('reads DOCKER_HOST as a unix socket or a plain tcp address, and refuses what it cannot speak', () => {
    expect(engineTarget(undefined)).toEqual({ origin: 'http://localhost', socketPath: '/var/run/docker.sock', address: 'unix:///var/run/docker.sock' });
    expect(engineTarget('unix:///run/user/1000/podman/podman.sock').socketPath).toBe('/run/user/1000/podman/podman.sock');
    expect(engineTarget('tcp://10.0.0.5:2375')).toEqual({ origin: 'http://10.0.0.5:2375', address: 'tcp://10.0.0.5:2375' });
    expect(() => engineTarget('ssh://me@host')).toThrow(/only unix:\/\/ sockets and plain tcp:\/\/ addresses/);
  });

  it("names an image's tag as the engine's CLI does (a registry's port is not a tag)", () => {
    expect(splitImage('svc:slim')).toEqual(['svc', 'slim']);
    expect(splitImage('svc')).toEqual(['svc', 'latest']);
    expect(splitImage('registry.local:5000/team/svc')).toEqual(['registry.local:5000/team/svc', 'latest']);
    expect(splitImage('registry.local:5000/team/svc:1.2')).toEqual(['registry.local:5000/team/svc', '1.2']);
  });

  it("maps a session's limits to the engine's fields: the cgroup's (no swap beyond memory), rlimits (CPU time is per command), a disk cap where the driver has one", () => {
    const limits = { ...DEFAULT_LIMITS, memoryMiB: 256, cpus: 0.5, pids: 64, openFiles: 128, fileMiB: 10, cpuSeconds: 30, diskMiB: 512 };
    const fields = hostConfigLimits(limits, engineDisk({ Driver: 'overlay2', DriverStatus: [['Backing Filesystem', 'extfs']] }));
    expect(fields).toEqual({
      Memory: 256 * 2 ** 20,
      MemorySwap: 256 * 2 ** 20,
      NanoCpus: 5e8,
      PidsLimit: 64,
      Ulimits: [
        { Name: 'nofile', Soft: 128, Hard: 128 },
        { Name: 'fsize', Soft: 10 * 2 ** 20, Hard: 10 * 2 ** 20 },
        { Name: 'core', Soft: 0, Hard: 0 },
      ],
    });
    expect(hostConfigLimits(limits, engineDisk({ Driver: 'overlay2', DriverStatus: [['Backing Filesystem', 'xfs']] })).StorageOpt).toEqual({ size: '512M' });
    expect(engineDisk({ Driver: 'overlay2', DriverStatus: [['Backing Filesystem', 'extfs']] }).detail).toBe('overlay2 on extfs: the writable layer cannot be capped (overlay2 needs xfs with pquota); it is read-only anyway');
    expect(refusesStorageOpt("--storage-opt is supported only for overlay over xfs with 'pquota' mount option")).toBe(true);
  });
});
