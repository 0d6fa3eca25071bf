/**
 * The git repository of the config history (API.md §4.24): a bare repository in data/.history,
 * driven through Debian's `git` CLI. Why the CLI and not isomorphic-git: commits are written by one
 * `git fast-import` process per batch (every file of every commit of the batch streamed in, one pack
 * written), history, diffs and squashing use git's own C code (log, diff-tree, commit-tree), pushes
 * speak every transport git does (file://, ssh, smart HTTP with credentials) and the repository can
 * be inspected and repaired with the same tool an operator already knows. isomorphic-git keeps every
 * object loose or in a pack it rewrites, has no gc, and diffs in JavaScript on the event loop.
 *
 * No work tree: blobs are the redacted bytes (redact.ts), never the files as they are on disk.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';

export const BRANCH = 'main';
export const REF = `refs/heads/${BRANCH}`;

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface GitRunOptions {
  input?: string | Buffer;
  env?: Record<string, string>;
  /** Exit codes that are not failures (e.g. 1 for `rev-parse --verify --quiet` of a missing ref). */
  okCodes?: number[];
  /** The process is killed (SIGKILL) after this long and the call rejects; default 120 s. */
  timeoutMs?: number;
}

/** Git's blob id of some bytes (sha1 of `blob <size>\0<bytes>`), computed without a process. */
export function blobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** Runs git commands against one bare repository. */
export class Git {
  constructor(
    readonly gitDir: string,
    private readonly binary = 'git',
  ) {}

  /** Runs `git <args>`; resolves stdout as a Buffer, rejects with GitError (stderr in the message). */
  run(args: string[], options: GitRunOptions = {}): Promise<{ stdout: Buffer; code: number }> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, {
        env: {
          // nothing of the user's or system's git configuration applies: the repository is ours alone
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: this.gitDir,
          GIT_DIR: this.gitDir,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_TERMINAL_PROMPT: '0',
          // a data dir restored or mounted with another owner must not make git refuse "dubious ownership"
          GIT_CONFIG_COUNT: '1',
          GIT_CONFIG_KEY_0: 'safe.directory',
          GIT_CONFIG_VALUE_0: this.gitDir,
          LC_ALL: 'C',
          ...options.env,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const timeoutMs = options.timeoutMs ?? 120_000;
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      timer.unref?.();
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
      child.on('error', (error) => reject(new GitError(`git ${args[0]}: ${error.message}`, null, '')));
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (signal === 'SIGKILL') {
          reject(new GitError(`git ${args[0]} did not finish within ${timeoutMs} ms`, null, ''));
          return;
        }
        const stderr = Buffer.concat(err).toString('utf8').trim();
        if (code === 0 || (code !== null && options.okCodes?.includes(code)))
          resolve({ stdout: Buffer.concat(out), code });
        else
          reject(
            new GitError(`git ${args[0]} exited with ${code}: ${stderr.split('\n').slice(-3).join(' ')}`, code, stderr),
          );
      });
      child.stdin.on('error', () => undefined); // a git that exits early closes its stdin: reported by 'close'
      child.stdin.end(options.input ?? '');
    });
  }

  async text(args: string[], options?: GitRunOptions): Promise<string> {
    return (await this.run(args, options)).stdout.toString('utf8');
  }

  /** Creates the bare repository if it is missing (idempotent). */
  async init(): Promise<void> {
    await mkdir(this.gitDir, { recursive: true, mode: 0o700 });
    await this.run(['init', '--quiet', '--bare', `--initial-branch=${BRANCH}`]);
    // fast-import writes one small pack per batch: let gc fold them together now and then
    await this.run(['config', 'gc.autoPackLimit', '20']);
    await this.run(['config', 'core.logAllRefUpdates', 'false']);
  }

  /** The commit id of the branch head, or null before the first commit. */
  async head(): Promise<string | null> {
    const { stdout, code } = await this.run(['rev-parse', '--verify', '--quiet', `${REF}^{commit}`], { okCodes: [1] });
    return code === 0 ? stdout.toString('utf8').trim() : null;
  }

  /** path → blob id of every file in a commit's tree. */
  async tree(rev: string): Promise<Map<string, string>> {
    const out = await this.text(['ls-tree', '-r', '-z', '--full-tree', rev]);
    const files = new Map<string, string>();
    for (const entry of out.split('\0')) {
      if (!entry) continue;
      const tab = entry.indexOf('\t');
      const [, , id] = entry.slice(0, tab).split(' ');
      files.set(entry.slice(tab + 1), id);
    }
    return files;
  }

  /** Commit count of the branch (0 before the first commit). */
  async count(): Promise<number> {
    if ((await this.head()) === null) return 0;
    return Number((await this.text(['rev-list', '--count', REF])).trim());
  }
}
