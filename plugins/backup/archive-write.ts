/**
 * tar's Pack fed with entries from memory: the tests build crafted archives with it. Backups
 * themselves are written by archive-stream.ts and archive-body.ts.
 */
import { once } from 'node:events';
import { Header, Pack, ReadEntry, type WriteEntry } from 'tar';

export interface EntryFields {
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink' | 'Link';
  mode: number;
  mtime?: Date;
  linkpath?: string;
}

/** Entries handed to the pack and not yet written; below tar's job limit (see entryPack). */
const IN_FLIGHT = 32;

/**
 * tar's Pack fed with entries made from memory. `add` waits while IN_FLIGHT entries are not yet
 * written: the pack stalls for good once more tar entries are pending than its `jobs` limit (its
 * job count then never drops below it, tar 7.5), so the limit is set above the window.
 */
export function entryPack(options: { gzip?: boolean; preservePaths?: boolean } = {}): {
  pack: Pack;
  add: (fields: EntryFields, data?: Buffer) => Promise<void>;
} {
  let latest: WriteEntry | undefined;
  const pending = new Set<Promise<unknown>>();
  const pack = new Pack({
    gzip: options.gzip ?? true,
    portable: true,
    preservePaths: options.preservePaths ?? false,
    jobs: IN_FLIGHT * 2,
    onWriteEntry: (entry) => {
      latest = entry;
    },
  });
  const add = async (fields: EntryFields, data?: Buffer) => {
    while (pending.size >= IN_FLIGHT) await Promise.race(pending);
    const read = new ReadEntry(new Header({ ...fields, size: data?.length ?? 0 }));
    latest = undefined;
    pack.add(read);
    const emitter = (latest ?? read) as unknown as NodeJS.EventEmitter;
    // errors surface through the pack's stream; this only tracks completion
    const written: Promise<unknown> = once(emitter, 'end')
      .catch(() => undefined)
      .finally(() => pending.delete(written));
    pending.add(written);
    if (data && data.length > 0) read.write(data);
    read.end();
  };
  return { pack, add };
}
