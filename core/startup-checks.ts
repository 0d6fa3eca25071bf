/**
 * Checks made once before the server builds anything: the data and backup dirs must exist (they
 * are created) and be writable by this process. A failure is a setup problem (a root-owned bind
 * mount, a read-only volume), reported as one line with exit code 78, never as a stack trace.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A setup problem found at startup: the message names the setting, the path and what to do. */
export class StartupError extends Error {
  readonly exitCode = 78; // EX_CONFIG, like a bad setting (API.md §5)
}

/** A directory setting: its dotted key, its environment variable and its value. */
export interface DirSetting {
  key: string;
  env: string;
  dir: string;
  /** Mode of a directory this check creates (an existing one is left as it is); default 0777 & ~umask. */
  mode?: number;
}

/** "uid 3456 (gid 3456)", or "this user" where the platform has no uids. */
export function whoAmI(): string {
  return typeof process.getuid === 'function' ? `uid ${process.getuid()} (gid ${process.getgid?.()})` : 'this user';
}

/** Errors that mean "this user may not write here" rather than a bug. */
export function isPermissionError(err: unknown): err is NodeJS.ErrnoException {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
}

function notWritable(setting: DirSetting, err: NodeJS.ErrnoException, what: string): StartupError {
  const dir = path.resolve(setting.dir);
  const fix =
    err.code === 'EROFS'
      ? 'mount it read-write'
      : typeof process.getuid === 'function'
        ? `make it writable, e.g. chown -R ${process.getuid()}:${process.getgid?.()} ${dir}`
        : 'make it writable';
  return new StartupError(`${setting.key} (${setting.env}) ${dir} ${what} by ${whoAmI()}: ${err.code}; ${fix}`);
}

/**
 * Creates the directory if needed and proves it writable by creating and removing a file: access()
 * alone misses read-only mounts on some filesystems and ACLs.
 */
export function ensureWritableDir(setting: DirSetting): void {
  const dir = path.resolve(setting.dir);
  try {
    mkdirSync(dir, { recursive: true, ...(setting.mode === undefined ? {} : { mode: setting.mode }) });
  } catch (err) {
    if (isPermissionError(err)) throw notWritable(setting, err, 'cannot be created');
    if ((err as NodeJS.ErrnoException).code === 'EEXIST' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new StartupError(`${setting.key} (${setting.env}) ${dir} is not a directory`);
    }
    throw err;
  }
  const probe = path.join(dir, `.write-check-${process.pid}.tmp`);
  try {
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (err) {
    if (isPermissionError(err)) throw notWritable(setting, err, 'is not writable');
    throw err;
  }
}
