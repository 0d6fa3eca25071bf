/**
 * The last generated provider config, kept in `data/.cache/provider-config.snapshot` (issue 11): a
 * restart serves it at once, stale (API.md §4.9), while the store is read and the first discovery sync
 * runs, instead of making Traefik wait (or see 502) for seconds. Written by the proxy-config group on
 * every new generation, read by core/server.ts before the app is built. A cache: no fsync, any
 * damaged or foreign file is ignored.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The provider endpoint's paths (API.md §4.9, §7). */
export const PROVIDER_PATHS = ['/api/proxy-config', '/api/v1/proxy-config', '/api/v1/traefik-config'];
const FILE = path.join('.cache', 'provider-config.snapshot');

export interface ConfigSnapshot {
  /** Quoted strong ETag, as served. */
  etag: string;
  generatedAt: string;
  /** The JSON body. */
  body: Buffer;
}

/** The snapshot of the data dir, or null when there is none (or it is unreadable or damaged). */
export async function readConfigSnapshot(dataDir: string): Promise<ConfigSnapshot | null> {
  let data: Buffer;
  try {
    data = await readFile(path.join(dataDir, FILE));
  } catch {
    return null;
  }
  const newline = data.indexOf(0x0a);
  if (newline < 0) return null;
  try {
    const meta = JSON.parse(data.toString('utf8', 0, newline)) as {
      format?: number;
      etag?: unknown;
      generated_at?: unknown;
      bytes?: unknown;
    };
    const body = data.subarray(newline + 1);
    if (
      meta.format !== 1 ||
      typeof meta.etag !== 'string' ||
      typeof meta.generated_at !== 'string' ||
      meta.bytes !== body.length
    )
      return null;
    return { etag: meta.etag, generatedAt: meta.generated_at, body };
  } catch {
    return null;
  }
}

/** Replaces the snapshot (temp file + rename: a reader never sees half of it). */
export async function writeConfigSnapshot(dataDir: string, snapshot: ConfigSnapshot): Promise<void> {
  const target = path.join(dataDir, FILE);
  await mkdir(path.dirname(target), { recursive: true });
  const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  const meta = JSON.stringify({
    format: 1,
    etag: snapshot.etag,
    generated_at: snapshot.generatedAt,
    bytes: snapshot.body.length,
  });
  try {
    await writeFile(temp, Buffer.concat([Buffer.from(`${meta}\n`), snapshot.body]), { mode: 0o600 });
    await rename(temp, target);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}
