/**
 * Streams the lines of the last `maxScanBytes` of a file (API.md §4.13: the access log may be
 * huge; only its tail is read). A line cut by the scan start is dropped, never half-parsed.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';

/** Opens the file (throws the fs error when it cannot) and yields its tail's lines. */
export async function openTailLines(path: string, maxScanBytes: number): Promise<AsyncIterable<string>> {
  const handle = await open(path, 'r');
  try {
    const info = await handle.stat();
    const size = info.size;
    if (!info.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
    const start = Math.max(0, size - maxScanBytes);
    // from one byte before the window: if that byte is '\n' the first "line" is empty, else it is the cut line
    const stream = createReadStream('', { fd: handle, start: start === 0 ? 0 : start - 1, end: Math.max(0, size - 1), autoClose: true });
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    return (async function* () {
      let first = start > 0;
      try {
        for await (const line of lines) {
          if (first) {
            first = false;
            continue;
          }
          yield line;
        }
      } finally {
        lines.close();
        stream.destroy();
      }
    })();
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}
