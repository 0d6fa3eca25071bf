/**
 * Writes a backup archive (in the archive worker), in bounded memory (issue 11): the file entries
 * go to an uncompressed temp body first, as the walk finds them (archive-body.ts: each file read
 * once, hashed and archived from the same bytes); the archive is then gzip(manifest entry, dir
 * entries, body, end blocks), so the manifest stays the first entry, as listings and restore expect
 * (archive-read.ts). Everything is synchronous: this runs off the event loop.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, openSync, readSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { BodyWriter, headerOf, paddingOf, BLOCK, type ArchivedFile } from './archive-body.ts';
import type { SourceFile, Sources } from './collect.ts';
import { GzipFileWriter } from './gzip-sync.ts';
import type { Manifest } from './manifest.ts';
import { MANIFEST_NAME } from './naming.ts';

const ARCHIVE_MODE = 0o600;
/** Chunks the body is read back and compressed in. */
const CHUNK = 1024 * 1024;
const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);

export interface ArchiveParts {
  /** Walks the sources, handing each file over as it is found. */
  walk: (onFile: (file: SourceFile) => void) => Sources;
  /** The manifest for the files actually archived (vanished ones are left out). */
  manifestOf: (archived: ArchivedFile[], sources: Sources) => Manifest;
}

const removeQuietly = (file: string) => {
  try {
    unlinkSync(file);
  } catch {
    // never created, or gone already
  }
};

/** Writes every file entry into `bodyFile`; returns the sources and what was archived, in order. */
function writeBody(bodyFile: string, walk: ArchiveParts['walk']): { sources: Sources; archived: ArchivedFile[] } {
  const fd = openSync(bodyFile, 'wx', 0o600);
  const archived: ArchivedFile[] = [];
  try {
    const body = new BodyWriter(fd);
    const sources = walk((file) => {
      const entry = body.addFile(file);
      if (entry) archived.push(entry);
    });
    body.flush();
    return { sources, archived };
  } finally {
    closeSync(fd);
  }
}

/** gzip(head, the body file, end of archive) into `temp`; returns the archive's size. */
function compress(temp: string, head: Buffer[], bodyFile: string): number {
  const out = openSync(temp, 'wx', ARCHIVE_MODE);
  try {
    const gzip = new GzipFileWriter(out);
    for (const part of head) gzip.write(part);
    const body = openSync(bodyFile, 'r');
    try {
      const chunk = Buffer.allocUnsafe(CHUNK);
      for (let read; (read = readSync(body, chunk, 0, CHUNK, null)) > 0;) gzip.write(chunk.subarray(0, read));
    } finally {
      closeSync(body);
    }
    gzip.write(END_OF_ARCHIVE);
    gzip.end();
    fchmodSync(out, ARCHIVE_MODE); // the umask may have narrowed it
    fsyncSync(out);
    return gzip.written;
  } finally {
    closeSync(out);
  }
}

/**
 * Writes the archive to a new temp file in `dir` (0600, fsynced) and returns its name; the caller
 * renames it into place. Nothing is left behind on failure.
 */
export function writeArchive(
  dir: string,
  stemOf: string,
  parts: ArchiveParts,
): { temp: string; size: number; manifest: Manifest; sources: Sources } {
  const stem = `.${stemOf}.${randomBytes(6).toString('hex')}`;
  const bodyFile = path.join(dir, `${stem}.body.tmp`);
  const temp = path.join(dir, `${stem}.tmp`);
  try {
    const { sources, archived } = writeBody(bodyFile, parts.walk);
    const manifest = parts.manifestOf(archived, sources);
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    const createdAt = new Date(manifest.created_at);
    // written in parts: the manifest (~170 bytes per file) is not copied once more
    const head = [
      headerOf({ path: MANIFEST_NAME, type: 'File', mode: 0o600, size: manifestBytes.length, mtime: createdAt }),
      manifestBytes,
      Buffer.concat([
        Buffer.alloc(paddingOf(manifestBytes.length)),
        ...sources.dirs.map((d) =>
          headerOf({ path: `${d.name}/`, type: 'Directory', mode: d.mode, size: 0, mtime: createdAt }),
        ),
      ]),
    ];
    const size = compress(temp, head, bodyFile);
    return { temp, size, manifest, sources };
  } catch (err) {
    removeQuietly(temp);
    throw err;
  } finally {
    removeQuietly(bodyFile);
  }
}
