/**
 * Runs archive jobs (archive-job.ts) in a worker thread, one per job: walking, reading, hashing and
 * tar-framing 20,000 files is synchronous there, so the event loop keeps answering during a backup
 * and the backup does not wait for the event loop either (with both on one loop, a busy store
 * reloading edited files slowed a backup of 10k resources from 4 s to 14 s and more; issue 11).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ArchiveJob, ArchiveJobResult } from './archive-job.ts';

/** Same extension as this module: .ts under tsx (dev, tests), .js in the compiled build. */
const EXTENSION = path.extname(fileURLToPath(import.meta.url));
const WORKER_URL = new URL(`./archive-worker${EXTENSION}`, import.meta.url);
/**
 * The worker keeps the manifest entries (~200 bytes per file) and small per-file garbage: a small
 * young generation keeps its RSS low; the old generation limit leaves room for ~1M files.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 512 };

/**
 * Workers do not inherit tsx's loader: under tsx the worker registers tsx's CommonJS hook and
 * requires the .ts entry (the ESM hook would start one more loader thread with its own heap).
 */
function startWorker(workerData: ArchiveJob): Worker {
  const options = { workerData, resourceLimits: WORKER_LIMITS };
  if (EXTENSION !== '.ts') return new Worker(WORKER_URL, options);
  const tsx = createRequire(import.meta.url).resolve('tsx/cjs/api');
  const entry = fileURLToPath(WORKER_URL);
  return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`, {
    ...options,
    eval: true,
  });
}

type WorkerMessage =
  { ok: true; result: ArchiveJobResult } | { ok: false; code: string | null; message: string; stack?: string };

/** The job's result; a failure rejects with an Error carrying the worker's errno `code`. */
export function runInWorker<K extends ArchiveJob['kind']>(
  job: ArchiveJob & { kind: K },
): Promise<Extract<ArchiveJobResult, { kind: K }>> {
  return new Promise((resolve, reject) => {
    const worker = startWorker(job);
    let settled = false;
    worker.once('message', (message: WorkerMessage) => {
      settled = true;
      if (message.ok) return resolve(message.result as Extract<ArchiveJobResult, { kind: K }>);
      const err = Object.assign(new Error(message.message), message.code ? { code: message.code } : {});
      if (message.stack) err.stack = message.stack;
      reject(err);
    });
    worker.once('error', (err) => {
      if (!settled) reject(err);
      settled = true;
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the archive worker exited with ${code} before it answered`));
      settled = true;
    });
  });
}
