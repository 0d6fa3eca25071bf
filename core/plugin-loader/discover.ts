/** Finds plugin directories in PLUGINS_DIR and reads their manifests. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { readManifest, type ManifestOutcome } from './manifest.ts';

/** One directory of PLUGINS_DIR and what its manifest says. */
export interface Candidate {
  /** Directory name inside PLUGINS_DIR. */
  dir: string;
  outcome: ManifestOutcome;
}

/** Every non-hidden directory of `pluginsDir`, sorted by name; a missing PLUGINS_DIR means no plugins. `reserved` is reservedNames(). */
export async function discoverPlugins(pluginsDir: string, reserved: readonly string[]): Promise<Candidate[]> {
  let entries;
  try {
    entries = await readdir(pluginsDir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  // Symlinked plugin dirs are allowed (a common way to install); hidden ones are editor or VCS leftovers.
  const dirs = entries
    .filter((e) => !e.name.startsWith('.') && (e.isDirectory() || e.isSymbolicLink()))
    .map((e) => e.name)
    .sort();
  const candidates: Candidate[] = [];
  for (const dir of dirs) {
    const full = path.join(pluginsDir, dir);
    candidates.push({ dir, outcome: await readManifest(full, reserved) });
  }
  return candidates;
}
