/**
 * Reading and restoring the config history (API.md §4.24): the commit list with filters and paging,
 * one commit with its unified diff per file (the committed bytes are already redacted), and the
 * restore of files as they were at a commit, validated as hand edits and written as one change.
 */
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import type { YamlStore } from '../../core/store/types.ts';
import { REF, type Git } from './git.ts';
import { historyErrors } from './errors.ts';
import { tracked, type Recorder } from './recorder.ts';
import { UnknownSecretError } from './redact.ts';

export type Change = 'added' | 'modified' | 'deleted';

export interface HistoryEntry {
  rev: string;
  at: string;
  author: string;
  source: string;
  message: string;
  files: { path: string; change: Change; diff?: string }[];
}

export interface ListFilter {
  path?: string;
  since?: Date;
  until?: Date;
  author?: string;
}

const FIELD = '\x1f';
const RECORD = '\x1e';
const END = '\x1d';
const FORMAT = `--format=${RECORD}%H${FIELD}%at${FIELD}%an${FIELD}%ae${FIELD}%B${END}`;
const CHANGES: Record<string, Change> = { A: 'added', M: 'modified', D: 'deleted', T: 'modified' };

export class HistoryService {
  constructor(
    private readonly git: Git,
    private readonly recorder: Recorder,
    private readonly store: YamlStore,
  ) {}

  /** Commit ids (newest first) matching the filter; the author is compared exactly. */
  async revisions(filter: ListFilter): Promise<string[]> {
    if ((await this.git.head()) === null) return [];
    const args = ['log', `--format=%H${FIELD}%an`];
    if (filter.since) args.push(`--since=${filter.since.toISOString()}`);
    if (filter.until) args.push(`--until=${filter.until.toISOString()}`);
    args.push(REF, '--');
    // an object named without its extension (`middlewares/auth`): its file, whichever extension it has
    if (filter.path)
      args.push(
        filter.path,
        ...(/\.[A-Za-z0-9]+$/.test(filter.path) ? [] : [`${filter.path}.yaml`, `${filter.path}.yml`]),
      );
    const out = await this.git.text(args);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(FIELD))
      .filter(([, author]) => filter.author === undefined || author === filter.author)
      .map(([rev]) => rev);
  }

  /** The entries of these commits, in the order given. */
  async entries(revs: string[]): Promise<HistoryEntry[]> {
    if (revs.length === 0) return [];
    const out = await this.git.text(['log', '--no-walk=unsorted', '--no-renames', '--name-status', FORMAT, ...revs]);
    return out
      .split(RECORD)
      .filter(Boolean)
      .map((record) => {
        const [header, names = ''] = record.split(END);
        const [rev, at, author, email, message] = header.split(FIELD);
        const files = names
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const [status, ...rest] = line.split('\t');
            return { path: unquote(rest.join('\t')), change: CHANGES[status[0]] ?? 'modified' };
          });
        return {
          rev,
          at: new Date(Number(at) * 1000).toISOString(),
          author,
          source: email.split('@')[0],
          message: message.trimEnd(),
          files,
        };
      });
  }

  /** The full commit id of a revision on the branch, or 404. */
  async resolve(rev: string): Promise<string> {
    const { stdout, code } = await this.git.run(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], {
      okCodes: [1, 128],
    });
    const full = stdout.toString('utf8').trim();
    if (code !== 0 || !full) throw historyErrors.notFound(rev);
    const reachable = await this.git.run(['merge-base', '--is-ancestor', full, REF], { okCodes: [1, 128] });
    if (reachable.code !== 0) throw historyErrors.notFound(rev);
    return full;
  }

  async show(
    rev: string,
  ): Promise<Omit<HistoryEntry, 'files'> & { files: { path: string; change: Change; diff: string }[]; diff: string }> {
    const full = await this.resolve(rev);
    const [entry] = await this.entries([full]);
    const diff = await this.git.text([
      'diff-tree',
      '-p',
      '--no-renames',
      '--root',
      '--no-commit-id',
      '--no-color',
      full,
    ]);
    const perFile = new Map<string, string>();
    for (const part of diff.split(/^(?=diff --git )/m)) {
      const match = /^diff --git a\/(.*) b\/(.*)$/m.exec(part);
      if (match) perFile.set(unquote(match[2]), part);
    }
    return {
      ...entry,
      files: entry.files.map((file) => ({ ...file, diff: perFile.get(file.path) ?? '' })),
      diff,
    };
  }

  /**
   * Writes the files as they were at `rev` (default: every file the commit changed) as one change:
   * each is judged as a hand edit first, and one that would be invalid (or holds a secret this node
   * never recorded, or lies under auth/) fails the whole restore with 422 before anything is written.
   */
  async restore(rev: string, paths: string[] | undefined): Promise<{ restored: string[]; rev: string }> {
    const full = await this.resolve(rev);
    const targets = paths ?? (await this.entries([full]))[0].files.map((file) => file.path);
    const problems: ErrorDetail[] = [];
    const planned: { path: string; bytes: Buffer | null }[] = [];
    for (const [index, relative] of targets.entries()) {
      const pointer = paths ? `/body/paths/${index}` : `/files/${relative}`;
      if (!tracked(relative) || relative.includes('//') || relative.split('/').includes('..')) {
        problems.push({ path: pointer, message: `${relative} is not a data file the history records` });
        continue;
      }
      if (relative.startsWith('auth/')) {
        problems.push({
          path: pointer,
          message: `${relative}: tokens are not restored from history (use /api/auth/tokens)`,
        });
        continue;
      }
      const committed = await this.blobAt(full, relative);
      let bytes: Buffer | null = null;
      if (committed) {
        try {
          bytes = this.recorder.unredact(relative, committed);
        } catch (err) {
          if (!(err instanceof UnknownSecretError)) throw err;
          problems.push({ path: pointer, message: err.message });
          continue;
        }
      }
      const invalid = this.store.checkRaw(relative, bytes);
      if (invalid) {
        const where =
          invalid.line !== null
            ? ` (line ${invalid.line}${invalid.column !== null ? `, column ${invalid.column}` : ''})`
            : '';
        problems.push({
          path: pointer,
          message: `${relative} as of ${full.slice(0, 12)} no longer validates${where}: ${invalid.message.split('\n')[0]}`,
        });
        continue;
      }
      planned.push({ path: relative, bytes });
    }
    if (problems.length > 0) throw historyErrors.notRestorable(full, problems);
    await this.recorder.holding(async () => {
      for (const file of planned) await this.store.applyRemote(file.path, file.bytes, undefined, 'restore');
    });
    return { restored: planned.map((file) => file.path), rev: full };
  }

  /** The committed bytes of a path at a commit, or null when it did not exist there. */
  private async blobAt(rev: string, relative: string): Promise<Buffer | null> {
    const listing = await this.git.text(['ls-tree', '-z', '--full-tree', rev, '--', relative]);
    const entry = listing.split('\0').find((line) => line.endsWith(`\t${relative}`));
    if (!entry || !entry.includes(' blob ')) return null;
    const id = entry.split('\t')[0].split(' ')[2];
    return (await this.git.run(['cat-file', 'blob', id])).stdout;
  }
}

/** A path as git prints it: C-quoted when it holds special characters. */
function unquote(value: string): string {
  if (!value.startsWith('"')) return value;
  try {
    return JSON.parse(value) as string;
  } catch {
    return value;
  }
}
