import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Runtime } from '../../../../contracts/worker.ts';
import { conflict } from '../../../../shared/errors.ts';
import type { TarFile } from '../../../../shared/archive/index.ts';

/**
 * Per-session folders of an SDK runtime: `<stateDir>/<runtime>/<session>/{config,home,tmp,work}` plus `session.json`
 * naming the runtime's own session id (Claude session id, Codex thread id). Each session gets its own config, HOME
 * and TMPDIR so nothing leaks between sessions or from the host user's dotfiles, and the mapping survives a worker
 * restart on the same state dir. One run or import at a time per session (the SDKs would fork the transcript).
 */
export interface SessionPaths {
  root: string;
  /** CLAUDE_CONFIG_DIR / CODEX_HOME. */
  config: string;
  home: string;
  tmp: string;
  /** The agent's working directory (empty; host tools are off by default). */
  work: string;
}

export interface SessionStore {
  paths(sessionId: string): SessionPaths;
  /** Creates the folders (mode 0700) and returns their paths. */
  prepare(sessionId: string): Promise<SessionPaths>;
  runtimeSessionId(sessionId: string): Promise<string | undefined>;
  setRuntimeSessionId(sessionId: string, runtimeSessionId: string): Promise<void>;
  /** Replaces the session with fresh folders holding `files` under `config/`; the swap is a rename, so a failure leaves the old state. */
  replace(sessionId: string, files: readonly TarFile[], runtimeSessionId: string): Promise<void>;
  /** Marks the session busy until the returned release runs; a second holder gets a 409. */
  lock(sessionId: string): () => void;
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** A folder name for any session id: safe ids as they are, others hashed (`=` never occurs in a safe id, so no clash). */
export function sessionFolderName(sessionId: string): string {
  return SAFE_ID.test(sessionId) ? sessionId : `=${createHash('sha256').update(sessionId).digest('hex').slice(0, 40)}`;
}

function layout(root: string): SessionPaths {
  return { root, config: join(root, 'config'), home: join(root, 'home'), tmp: join(root, 'tmp'), work: join(root, 'work') };
}

async function makeFolders(paths: SessionPaths): Promise<void> {
  for (const dir of [paths.config, paths.home, paths.tmp, paths.work]) await mkdir(dir, { recursive: true, mode: 0o700 });
}

export function createSessionStore(stateDir: string, runtime: Runtime): SessionStore {
  const base = join(stateDir, runtime);
  const busy = new Set<string>();
  const paths = (sessionId: string) => layout(join(base, sessionFolderName(sessionId)));
  const mappingFile = (root: string) => join(root, 'session.json');

  return {
    paths,
    async prepare(sessionId) {
      const p = paths(sessionId);
      await makeFolders(p);
      return p;
    },
    async runtimeSessionId(sessionId) {
      try {
        const parsed = JSON.parse(await readFile(mappingFile(paths(sessionId).root), 'utf8')) as { runtimeSessionId?: unknown };
        return typeof parsed.runtimeSessionId === 'string' ? parsed.runtimeSessionId : undefined;
      } catch {
        return undefined;
      }
    },
    async setRuntimeSessionId(sessionId, runtimeSessionId) {
      await writeFile(mappingFile(paths(sessionId).root), JSON.stringify({ sessionId, runtimeSessionId }) + '\n', { mode: 0o600 });
    },
    async replace(sessionId, files, runtimeSessionId) {
      const target = paths(sessionId);
      const staging = layout(`${target.root}.import-${randomBytes(6).toString('hex')}`);
      try {
        await makeFolders(staging);
        for (const file of files) {
          const path = join(staging.config, file.path);
          await mkdir(dirname(path), { recursive: true, mode: 0o700 });
          await writeFile(path, file.data, { mode: 0o600 });
        }
        await writeFile(mappingFile(staging.root), JSON.stringify({ sessionId, runtimeSessionId }) + '\n', { mode: 0o600 });
        const old = `${target.root}.old-${randomBytes(6).toString('hex')}`;
        await rename(target.root, old).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        });
        await rename(staging.root, target.root);
        await rm(old, { recursive: true, force: true });
      } finally {
        await rm(staging.root, { recursive: true, force: true });
      }
    },
    lock(sessionId) {
      if (busy.has(sessionId)) throw conflict(`session ${sessionId} is busy with another run or import`);
      busy.add(sessionId);
      return () => busy.delete(sessionId);
    },
  };
}
