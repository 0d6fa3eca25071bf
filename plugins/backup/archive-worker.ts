/** Worker thread entry (archive-runner.ts): runs one archive job and posts its result or the error. */
import { parentPort, workerData } from 'node:worker_threads';
import { runArchiveJob, type ArchiveJob } from './archive-job.ts';

try {
  parentPort!.postMessage({ ok: true, result: runArchiveJob(workerData as ArchiveJob) });
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  parentPort!.postMessage({ ok: false, code: e.code ?? null, message: e.message, stack: e.stack });
}
