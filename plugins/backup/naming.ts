/** Backup ids, kinds and file names (API.md §4.10). */

export const BACKUP_ID_PATTERN = '^backup-[0-9]{8}T[0-9]{6}Z(-[a-z0-9-]{1,40}){0,1}$';
const BACKUP_ID = new RegExp(BACKUP_ID_PATTERN);
const SUFFIX = '.tar.gz';
/** The first entry of every archive. */
export const MANIFEST_NAME = 'manifest.json';

export const BACKUP_KINDS = ['manual', 'scheduled', 'pre-restore', 'pre-update'] as const;
export type BackupKind = (typeof BACKUP_KINDS)[number];

/** `<id>.tar.gz`. */
export const fileNameOf = (id: string): string => `${id}${SUFFIX}`;

/** The id of a file in BACKUP_DIR, or undefined when the name is not a backup's. */
export function idOfFileName(name: string): string | undefined {
  if (!name.endsWith(SUFFIX)) return undefined;
  const id = name.slice(0, -SUFFIX.length);
  return BACKUP_ID.test(id) ? id : undefined;
}

/**
 * `backup-<UTC yyyymmddThhmmssZ>[-<kind>]`, then `-2`, `-3`, … while `taken` says the id exists
 * (manual backups carry no kind suffix).
 */
export function nextBackupId(at: Date, kind: BackupKind, taken: (id: string) => boolean): string {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const base = `backup-${stamp}${kind === 'manual' ? '' : `-${kind}`}`;
  if (!taken(base)) return base;
  for (let n = 2; ; n++) {
    if (!taken(`${base}-${n}`)) return `${base}-${n}`;
  }
}

/** What an id alone tells, for an archive whose manifest cannot be read: its second and its kind. */
export function describeId(id: string): { created_at: string; kind: BackupKind } {
  const [, d, t, suffix = ''] = /^backup-(\d{8})T(\d{6})Z(?:-(.*))?$/.exec(id) ?? [];
  const iso = `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${t.slice(0, 2)}:${t.slice(2, 4)}:${t.slice(4, 6)}.000Z`;
  const time = Date.parse(iso);
  const kind = BACKUP_KINDS.find((k) => k !== 'manual' && (suffix === k || suffix.startsWith(`${k}-`))) ?? 'manual';
  return { created_at: Number.isNaN(time) ? new Date(0).toISOString() : new Date(time).toISOString(), kind };
}
