/**
 * A Traefik plugin's zip, checked and unpacked for vendoring (API.md §4.20). yauzl reads the zip:
 * it checks names (no absolute paths, no `..`) and entry sizes against the central directory and
 * exposes each entry's Unix type bits, so links and special files can be refused before any byte
 * is written. Like Traefik, a single top folder (the registry serves GitHub archives) is dropped.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { parseYamlValue } from '../../core/yaml-parse.ts';
import yauzl from 'yauzl';
import { pluginErrors } from './errors.ts';

export const ARCHIVE_LIMITS = { entries: 5_000, unpackedBytes: 50 * 1024 * 1024 } as const;

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

interface Member {
  entry: yauzl.Entry;
  /** Path inside the plugin (top folder dropped), `/`-separated. */
  relative: string;
  directory: boolean;
}

const fail = (cause: string) => pluginErrors.invalidArchive(cause);

function open(zip: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.fromBuffer(zip, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (err, file) =>
      err ? reject(fail(`not a readable zip: ${err.message}`)) : resolve(file),
    ),
  );
}

/** Every entry's metadata, in archive order (yauzl's name checks surface here as 422). */
function listEntries(file: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  if (file.entryCount > ARCHIVE_LIMITS.entries)
    return Promise.reject(fail(`${file.entryCount} entries, more than ${ARCHIVE_LIMITS.entries}`));
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    file.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      file.readEntry();
    });
    file.on('end', () => resolve(entries));
    file.on('error', (err: Error) => reject(fail(err.message)));
    file.readEntry();
  });
}

/** The Unix file type of an entry made on Unix; null when the zip carries no Unix mode. */
function unixType(entry: yauzl.Entry): number | null {
  const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
  return entry.versionMadeBy >> 8 === 3 && mode !== 0 ? mode & S_IFMT : null;
}

/** Checks types, sizes and the top folder; returns the members with their paths inside the plugin. */
function members(entries: yauzl.Entry[]): Member[] {
  let total = 0;
  for (const entry of entries) {
    const type = unixType(entry);
    const directory = entry.fileName.endsWith('/');
    if (type === S_IFLNK) throw fail(`entry ${entry.fileName} is a symbolic link`);
    if (type !== null && type !== (directory ? S_IFDIR : S_IFREG))
      throw fail(`entry ${entry.fileName} is not a regular file or directory`);
    if (entry.fileName.split('/').some((segment) => segment === '..'))
      throw fail(`entry ${entry.fileName} leaves the plugin directory`);
    total += entry.uncompressedSize;
    if (total > ARCHIVE_LIMITS.unpackedBytes)
      throw fail(`unpacks to more than ${ARCHIVE_LIMITS.unpackedBytes / 1024 / 1024} MiB`);
  }
  const tops = new Set(entries.map((entry) => entry.fileName.split('/')[0]));
  const [top] = [...tops];
  // GitHub-style archives hold one top folder: Traefik drops it, so do we
  const dropTop = tops.size === 1 && entries.every((entry) => entry.fileName.includes('/'));
  return entries
    .map((entry) => ({
      entry,
      relative: dropTop ? entry.fileName.slice(top!.length + 1) : entry.fileName,
      directory: entry.fileName.endsWith('/'),
    }))
    .filter((member) => member.relative !== '');
}

function readStream(file: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    file.openReadStream(entry, (err, stream) => (err ? reject(fail(err.message)) : resolve(stream))),
  );
}

async function readText(file: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await readStream(file, entry)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `.traefik.yml` at the plugin's root must name `moduleName` as its `import`. */
async function checkManifest(file: yauzl.ZipFile, list: Member[], moduleName: string): Promise<void> {
  const manifest = list.find((member) => member.relative === '.traefik.yml');
  if (!manifest) throw fail('no .traefik.yml at the plugin root');
  let value: unknown;
  try {
    value = parseYamlValue(await readText(file, manifest.entry));
  } catch (err) {
    throw fail(`.traefik.yml is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const imported = (value as { import?: unknown } | null)?.import;
  if (imported !== moduleName)
    throw fail(`.traefik.yml imports ${typeof imported === 'string' ? imported : '(nothing)'}, not ${moduleName}`);
}

/**
 * Checks `zip` (422 `invalid_archive` naming the cause) and unpacks it into `target`, which must
 * not exist yet. Nothing is written unless every check passed.
 */
export async function unpackPlugin(zip: Buffer, moduleName: string, target: string): Promise<{ files: number }> {
  const file = await open(zip);
  try {
    const list = members(await listEntries(file));
    await checkManifest(file, list, moduleName);
    await mkdir(target, { recursive: false, mode: 0o755 });
    let files = 0;
    for (const member of list) {
      const destination = path.join(target, ...member.relative.split('/'));
      // belt and braces: yauzl refused `..` and absolute names already
      if (!destination.startsWith(target + path.sep)) throw fail(`entry ${member.entry.fileName} leaves the plugin`);
      if (member.directory) {
        await mkdir(destination, { recursive: true, mode: 0o755 });
        continue;
      }
      await mkdir(path.dirname(destination), { recursive: true, mode: 0o755 });
      await pipeline(
        await readStream(file, member.entry),
        createWriteStream(destination, { mode: 0o644, flags: 'wx' }),
      );
      files++;
    }
    return { files };
  } finally {
    file.close();
  }
}
