import type { Runtime } from '../../../../contracts/worker.ts';
import { AppError } from '../../../../shared/errors.ts';

/**
 * Lazy loading of the optional SDK packages. A worker that serves only `general` never pays for importing them, and
 * an install without them (`npm install --omit=optional`, a slim image) still starts: a run on their runtime ends in
 * one clear terminal error naming the package instead of crashing the worker at boot.
 */
export type SdkLoader<T> = () => Promise<T>;

function isMissingPackage(err: unknown, pkg: string): boolean {
  const e = err as { code?: string; message?: string };
  return (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') && String(e.message ?? '').includes(pkg);
}

/** Memoizes a successful import; a failed one is retried on the next run (the package may have been installed since). */
export function lazySdk<T>(runtime: Runtime, pkg: string, load: SdkLoader<T>): SdkLoader<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((err: unknown) => {
      loaded = undefined;
      if (isMissingPackage(err, pkg)) {
        throw new AppError(503, `${runtime} needs the optional package ${pkg}; install it (npm install ${pkg}) or use another runtime`, { cause: err });
      }
      throw err;
    });
    return loaded;
  };
}
