/** Worker thread entry (stats-runner.ts): scans one access log and posts the Stats body or the error. */
import { parentPort, workerData } from 'node:worker_threads';
import { scanAccessLog, type ScanRequest } from './access-log-scan.ts';

try {
  parentPort!.postMessage({ ok: true, result: scanAccessLog(workerData as ScanRequest) });
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  parentPort!.postMessage({ ok: false, code: e.code ?? null, message: e.message });
}
