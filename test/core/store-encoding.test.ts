/**
 * Hand-edited data files must be valid Unicode (API.md §2 Encoding, §3.3): invalid UTF-8 bytes or a
 * double-quoted YAML escape of a lone UTF-16 surrogate are an invalid edit, reported with file and
 * line, and the last good version keeps serving (before: read as U+FFFD / a lone surrogate, served).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { waitFor } from '../helpers/wait.ts';
import { buildApp, call } from '../middlewares/support.ts';

const GOOD = 'name: Limit\ntype: rateLimit\nconfig:\n  average: 10\n';

async function served(app: Awaited<ReturnType<typeof buildApp>>, id: string, name: string) {
  return waitFor(async () => {
    const response = await call(app, { method: 'GET', url: `/api/middlewares/${id}` });
    return response.status === 200 && response.body.name === name ? response.body : null;
  }, 5000);
}

const cases: Array<{ title: string; bytes: Buffer; line: number; message: RegExp }> = [
  {
    title: 'invalid UTF-8 bytes',
    bytes: Buffer.concat([
      Buffer.from('type: rateLimit\nconfig:\n  average: 10\nname: "bad '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"\n'),
    ]),
    line: 4,
    message: /not valid UTF-8.*line 4, column 12/,
  },
  {
    title: 'a lone surrogate escape in a value',
    bytes: Buffer.from('type: rateLimit\nname: "a\\ud800b"\nconfig:\n  average: 10\n'),
    line: 2,
    message: /name: must be valid Unicode text/,
  },
  {
    title: 'a lone surrogate escape in a key',
    bytes: Buffer.from('name: Limit\ntype: headers\nconfig:\n  customRequestHeaders:\n    "X-\\udc00": v\n'),
    line: 5,
    message: /config\/customRequestHeaders\/X-.*must be valid Unicode text/,
  },
];

for (const { title, bytes, line, message } of cases)
  test(`a hand edit with ${title} is an invalid edit with its line; the last good version keeps serving`, async (t) => {
    const app = await buildApp(t);
    const dir = path.join(app.store.dataDir, 'middlewares');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'limit.yaml');
    await writeFile(file, GOOD);
    await served(app, 'limit', 'Limit');
    await writeFile(file, bytes);
    const invalid = await waitFor(() => app.store.invalidFiles().find((f) => f.path === file) ?? null, 5000);
    t.is(invalid.line, line);
    t.regex(invalid.message, message);
    const after = await call(app, { method: 'GET', url: '/api/middlewares/limit' });
    t.is(after.status, 200);
    t.is(after.body.name, 'Limit', 'the last good version is served');
    t.is(after.body.type, 'rateLimit');
    // a well-formed escaped pair and raw 4-byte UTF-8 are characters: served
    await writeFile(file, 'name: "ok \\ud83e\\udde8 🧨"\ntype: rateLimit\nconfig:\n  average: 10\n');
    await served(app, 'limit', 'ok 🧨 🧨');
    t.falsy(app.store.invalidFiles().find((f) => f.path === file));
  });
