/** Whether a configured path may be written, for the settings that name a file or directory on the host. */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Whether this process may write `target` (W_OK); false when it does not exist. */
export function canWrite(target: string): boolean {
  try {
    accessSync(target, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A path setting's `writable`: the path itself when it exists, else its parent (where it would be created). */
export function writableOrCreatable(target: string, exists: boolean): boolean {
  return exists ? canWrite(target) : canWrite(path.dirname(target));
}
