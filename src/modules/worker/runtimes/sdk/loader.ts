import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Runtime } from '../../../../contracts/worker.ts';
import { AppError } from '../../../../shared/errors.ts';
import { PACKAGE_ROOT } from '../../../../shared/package-root.ts';

/**
 * Lazy loading of the runtime SDK packages (optional peer dependencies: `npm ci` leaves them out, `npm run
 * install:runtimes` adds them). A worker that serves only `general` never pays for importing them, and an install
 * without them still starts: a run on their runtime ends in one clear terminal error saying how to install the package
 * instead of crashing the worker at boot.
 */
export type SdkLoader<T> = () => Promise<T>;

function isMissingPackage(err: unknown, pkg: string): boolean {
  const e = err as { code?: string; message?: string };
  return (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') && String(e.message ?? '').includes(pkg);
}

/** The version package.json pins (`peerDependencies`), so the hint installs the one this build was tested with. */
function pinned(pkg: string): string {
  try {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { peerDependencies?: Record<string, string> };
    const version = manifest.peerDependencies?.[pkg];
    return version ? `${pkg}@${version}` : pkg;
  } catch {
    return pkg;
  }
}

/** The one error a run on a runtime whose SDK is not installed ends with. */
export function missingSdkMessage(runtime: Runtime, pkg: string): string {
  return `${runtime} needs the optional package ${pkg}, which is not installed: run \`npm run install:runtimes\` in a clone of svc, or \`npm install ${pinned(pkg)}\` beside an installed svc; or use another runtime`;
}

/** Memoizes a successful import; a failed one is retried on the next run (the package may have been installed since). */
export function lazySdk<T>(runtime: Runtime, pkg: string, load: SdkLoader<T>): SdkLoader<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((err: unknown) => {
      loaded = undefined;
      if (isMissingPackage(err, pkg)) {
        throw new AppError(503, missingSdkMessage(runtime, pkg), { cause: err });
      }
      throw err;
    });
    return loaded;
  };
}
