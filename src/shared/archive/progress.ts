import { channel } from 'node:diagnostics_channel';

/**
 * Progress of archive reads, on the diagnostics channel `svc:archive` (Node's `diagnostics_channel`): an `entry` message
 * as each entry starts to inflate and one `end` message per archive, refused or not. Nothing subscribes in the server;
 * it is there for an operator's tooling and for tests that must act while an archive is still inflating.
 */
export type ArchiveProgress =
  | { event: 'entry'; format: 'zip' | 'tar.gz'; field: string; index: number; name: string; inflatedBytes: number }
  | { event: 'end'; format: 'zip' | 'tar.gz'; field: string; entries: number; inflatedBytes: number; refused: string | null };

export const ARCHIVE_CHANNEL = 'svc:archive';

const progress = channel(ARCHIVE_CHANNEL);

export function publish(message: ArchiveProgress): void {
  if (progress.hasSubscribers) progress.publish(message);
}
