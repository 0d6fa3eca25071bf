/**
 * `manifest.json` of an archive and the safety checks a restore applies to every entry (API.md
 * §4.10): regular files and dirs only, relative, no `..`, inside `data/` or `extra/`, each file
 * listed in the manifest with the same size and SHA-256, each listed file present once.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import { BACKUP_KINDS, MANIFEST_NAME } from './naming.ts';

export { MANIFEST_NAME };
/** A manifest of 10,000 entries takes about 2 MB; anything much larger is not one of ours. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
const MAX_PATH_LENGTH = 4096;
/** Problems reported in `details` at most (the first one is in the message). */
const MAX_DETAILS = 50;

export const ManifestSchema = Type.Object({
  format: Type.Literal(1),
  created_at: Type.String(),
  app_version: Type.String(),
  kind: Type.Union(BACKUP_KINDS.map((k) => Type.Literal(k))),
  note: Type.String(),
  files: Type.Array(
    Type.Object({
      path: Type.String({ minLength: 1 }),
      size: Type.Integer({ minimum: 0 }),
      sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    }),
  ),
  extra: Type.Array(Type.Object({ path: Type.String({ minLength: 1 }), original_path: Type.String({ minLength: 1 }) })),
});
export type Manifest = Static<typeof ManifestSchema>;
const manifestCheck = TypeCompiler.Compile(ManifestSchema);

/** One entry as found in an archive or a staging dir. */
export interface EntryFact {
  path: string;
  /** tar's type name: `File`, `Directory`, `SymbolicLink`, `Link`, … */
  type: string;
  size: number;
  sha256?: string;
}

/** The manifest if `text` is one (format 1), else the reason it is not. */
export function parseManifest(text: string): { manifest: Manifest } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'is not valid JSON' };
  }
  if (manifestCheck.Check(value)) return { manifest: value };
  const first = manifestCheck.Errors(value).First();
  return { problem: `is not a format 1 manifest: ${first?.path || '/'} ${first?.message ?? 'is invalid'}` };
}

const TYPE_NAMES: Record<string, string> = {
  SymbolicLink: 'a symbolic link',
  Link: 'a hard link',
  CharacterDevice: 'a device',
  BlockDevice: 'a device',
  FIFO: 'a FIFO',
};

/** Why an entry may not be restored, or undefined when it may. */
export function entryProblem(raw: string, type: string): string | undefined {
  if (type !== 'File' && type !== 'Directory')
    return `is ${TYPE_NAMES[type] ?? `an unsupported entry (${type})`}; only regular files and directories are allowed`;
  if (raw.length > MAX_PATH_LENGTH) return `path is longer than ${MAX_PATH_LENGTH} characters`;
  if (raw.includes('\0')) return 'path contains a NUL character';
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) return 'path is absolute';
  const name = type === 'Directory' ? raw.replace(/\/$/, '') : raw;
  const segments = name.split('/');
  if (segments.includes('..')) return 'path contains ..';
  if (name.includes('\\')) return 'path contains a backslash';
  if (segments.some((s) => s === '' || s === '.')) return 'path has an empty or . segment';
  if (name === MANIFEST_NAME) return type === 'File' ? undefined : 'manifest.json must be a file';
  if (segments[0] === 'data') return undefined;
  if (
    segments[0] === 'extra' &&
    (segments.length === 1 ? type === 'Directory' : segments.length === 2 && type === 'File')
  )
    return undefined;
  return 'path is outside data/ and extra/';
}

/** Every problem of an archive's entries against its manifest (empty when it may be restored). */
export function checkEntries(facts: EntryFact[], manifest: Manifest): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const add = (path: string, message: string) => {
    if (problems.length < MAX_DETAILS) problems.push({ path, message });
  };
  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  if (listed.size !== manifest.files.length) add(MANIFEST_NAME, 'lists a path twice');
  for (const file of manifest.files) {
    const problem = entryProblem(file.path, 'File');
    if (problem || file.path === MANIFEST_NAME)
      add(file.path, `listed in the manifest: ${problem ?? 'the manifest cannot list itself'}`);
  }
  for (const extra of manifest.extra) {
    if (!extra.path.startsWith('extra/') || !listed.has(extra.path))
      add(extra.path, 'extra entry is not a listed file under extra/');
    if (!extra.original_path.startsWith('/')) add(extra.path, 'original_path is not absolute');
  }

  const seen = new Set<string>();
  const seenFiles = new Set<string>();
  for (const fact of facts) {
    const problem = entryProblem(fact.path, fact.type);
    if (problem) {
      add(fact.path, problem);
      continue;
    }
    const name = fact.type === 'Directory' ? fact.path.replace(/\/$/, '') : fact.path;
    if (seen.has(name)) add(fact.path, 'appears twice in the archive');
    seen.add(name);
    if (fact.type !== 'File' || name === MANIFEST_NAME) continue;
    seenFiles.add(name);
    const expected = listed.get(name);
    if (!expected) add(fact.path, 'is not listed in the manifest');
    else if (expected.size !== fact.size)
      add(fact.path, `size ${fact.size} differs from the manifest (${expected.size})`);
    else if (expected.sha256 !== fact.sha256) add(fact.path, 'SHA-256 differs from the manifest');
  }
  for (const file of manifest.files)
    if (!seenFiles.has(file.path)) add(file.path, 'is listed in the manifest but missing from the archive');
  return problems;
}
