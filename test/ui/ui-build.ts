/**
 * The built UI for the UI tests, made once per version of the UI sources and shared by every test
 * process: `vite build` writes into a private temp dir that is renamed to a directory named after
 * a hash of the sources, under a cross-process lock. A test never serves ui/dist, which a developer's
 * `npm run build:ui` (or another test process) may be emptying and rewriting at that moment.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';

const ROOT = path.join(import.meta.dirname, '..', '..');
const UI = path.join(ROOT, 'ui');
/** Shared by all checkouts and runs on this machine: a build is named by what went into it. */
export const UI_BUILD_CACHE = process.env.UI_BUILD_CACHE ?? path.join(tmpdir(), 'stack-manager-ui-builds');
/** Builds nobody used for this long are removed when a new one is made. */
const KEEP_UNUSED_MS = 24 * 3600_000;

/** Every file under `dir` (relative path → bytes), without build output and installed packages. */
function sourceFiles(dir: string, relative = ''): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(path.join(dir, relative), { withFileTypes: true })) {
    if (['dist', 'node_modules', '.vite'].includes(entry.name)) continue;
    const name = path.join(relative, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(dir, name));
    else if (entry.isFile()) files.push(name);
  }
  return files.sort();
}

/**
 * A hash of what `vite build` reads: ui/ (sources, index.html, vite.config.ts), the templates the
 * config bakes in, and package-lock.json (the versions of vite, preact and their plugins).
 */
export function uiSourceHash(): string {
  const hash = createHash('sha256');
  const add = (file: string) => {
    hash.update(`${path.relative(ROOT, file)}\0`);
    hash.update(readFileSync(file));
    hash.update('\0');
  };
  for (const file of sourceFiles(UI)) add(path.join(UI, file));
  const templates = path.join(ROOT, 'config', 'templates');
  for (const file of sourceFiles(templates)) add(path.join(templates, file));
  add(path.join(ROOT, 'package-lock.json'));
  return hash.digest('hex').slice(0, 20);
}

async function viteBuild(outDir: string): Promise<void> {
  const vite = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const config = path.join(UI, 'vite.config.ts');
  const args = [vite, 'build', '--config', config, '--outDir', outDir, '--emptyOutDir', '--logLevel', 'error'];
  await promisify(execFile)(process.execPath, args, { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
}

/** Removes builds of other source versions that no test has used for a day (best effort). */
async function pruneOldBuilds(keep: string): Promise<void> {
  for (const name of await readdir(UI_BUILD_CACHE).catch(() => [] as string[])) {
    const full = path.join(UI_BUILD_CACHE, name);
    if (full === keep || name.endsWith('.lock')) continue;
    const info = await stat(full).catch(() => null);
    if (info && Date.now() - info.mtimeMs > KEEP_UNUSED_MS) await rm(full, { recursive: true, force: true });
  }
}

/**
 * The directory of the build of the current sources, made if no process made it yet. Concurrent
 * callers wait on the lock; the loser of a race (a compromised lock) finds the directory made
 * and drops its own copy. If the sources change during the build, it is made again for the new
 * ones, so a test never gets a mix.
 */
async function buildOnce(): Promise<string> {
  await mkdir(UI_BUILD_CACHE, { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const hash = uiSourceHash();
    const dir = path.join(UI_BUILD_CACHE, hash);
    if (existsSync(path.join(dir, 'index.html'))) {
      const now = new Date();
      await utimes(dir, now, now).catch(() => undefined); // marks it in use for pruneOldBuilds
      return dir;
    }
    const release = await lockfile.lock(dir, {
      realpath: false,
      lockfilePath: `${dir}.lock`,
      // a build takes seconds to minutes on a busy box: wait for it rather than build twice
      stale: 60_000,
      update: 10_000,
      retries: { retries: 1200, factor: 1.2, minTimeout: 100, maxTimeout: 1000 },
      onCompromised: () => undefined,
    });
    try {
      if (existsSync(path.join(dir, 'index.html'))) return dir;
      const scratch = await mkdtemp(path.join(UI_BUILD_CACHE, `${hash}.building-`));
      try {
        await viteBuild(scratch);
        if (uiSourceHash() !== hash && attempt < 3) continue; // edited meanwhile: build the new sources
        await rename(scratch, dir).catch((error: NodeJS.ErrnoException) => {
          // another process (whose lock we took as stale) published the same sources first
          if (!existsSync(path.join(dir, 'index.html'))) throw error;
        });
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    } finally {
      await release().catch(() => undefined);
    }
    await pruneOldBuilds(dir);
    return dir;
  }
}

let building: Promise<string> | null = null;
/** The built UI of the current sources (once per process; one build per source version across processes). */
export function ensureUiBuilt(): Promise<string> {
  building ??= buildOnce();
  return building;
}
