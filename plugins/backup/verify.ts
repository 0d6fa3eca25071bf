/**
 * The checks of a restore (API.md §4.10): the archive is scanned and every entry validated against
 * its manifest before anything changes; after extraction the staged tree is checked once more, so
 * what is swapped in is exactly what was validated (the file could have changed in between).
 */
import path from 'node:path';
import { ArchiveProblem, extractArchive, scanArchive, type ArchiveLimits } from './archive-read.ts';
import { backupErrors } from './errors.ts';
import { checkEntries, MANIFEST_NAME, MAX_MANIFEST_BYTES, parseManifest, type Manifest } from './manifest.ts';

export interface VerifiedArchive {
  manifest: Manifest;
  /** Entries to extract: validated paths of dirs (no trailing slash) and files, without the manifest. */
  paths: Set<string>;
  /** Sum of entry sizes. */
  bytes: number;
}

/** Scans `file` and validates every entry; throws 422 `invalid_archive` naming the entries. */
export async function verifyArchive(file: string, id: string, limits: ArchiveLimits): Promise<VerifiedArchive> {
  const invalid = (entry: string, message: string) => backupErrors.invalidArchive(id, [{ path: entry, message }]);
  let scan;
  try {
    scan = await scanArchive(file, limits);
  } catch (err) {
    if (err instanceof ArchiveProblem) throw invalid(err.entry, err.message);
    throw err;
  }
  const manifestEntry = scan.facts.find((f) => f.path === MANIFEST_NAME);
  if (!manifestEntry) throw invalid(MANIFEST_NAME, 'is missing');
  if (manifestEntry.type !== 'File') throw invalid(MANIFEST_NAME, 'must be a regular file');
  if (scan.manifestText === undefined) throw invalid(MANIFEST_NAME, `is larger than ${MAX_MANIFEST_BYTES} bytes`);
  const parsed = parseManifest(scan.manifestText);
  if ('problem' in parsed) throw invalid(MANIFEST_NAME, parsed.problem);
  const problems = checkEntries(scan.facts, parsed.manifest);
  if (problems.length > 0) throw backupErrors.invalidArchive(id, problems);
  const paths = new Set(scan.facts.map((f) => f.path.replace(/\/$/, '')).filter((p) => p !== MANIFEST_NAME));
  return { manifest: parsed.manifest, paths, bytes: scan.facts.reduce((sum, f) => sum + f.size, 0) };
}

/** Extracts a verified archive into `stage` and checks the result against the manifest again. */
export async function stageArchive(file: string, id: string, stage: string, verified: VerifiedArchive): Promise<void> {
  const facts = await extractArchive(file, stage, verified.paths);
  const problems = checkEntries([...facts, { path: MANIFEST_NAME, type: 'File', size: 0 }], verified.manifest);
  if (problems.length > 0) throw backupErrors.invalidArchive(id, problems);
}

/** `<stage>/<entry>` for an entry path of the archive. */
export const stagedPath = (stage: string, entry: string): string => path.join(stage, ...entry.split('/'));
