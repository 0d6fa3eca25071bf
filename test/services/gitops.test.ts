import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildApp, call } from '../middlewares/support.ts';

async function writeService(dataDir: string, file: string, text: string): Promise<string> {
  const dir = path.join(dataDir, 'services');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, file), text);
  return path.join(dir, file);
}

test('a service file written by hand appears via GET within 1 s with defaults filled in', async (t) => {
  const app = await buildApp(t);
  await writeService(
    app.store.dataDir,
    'web.yml',
    'name: Web\ntype: loadBalancer\nconfig:\n  servers:\n    - url: http://web:80\n',
  );
  const seen = await waitFor(async () => {
    const response = await call(app, { method: 'GET', url: '/api/services/web' });
    return response.status === 200 ? response.body : null;
  }, 1000);
  t.like(seen, { id: 'web', protocol: 'http', source: 'manual', description: '', status: 'active' });
});

test('invalid hand-written services are ignored and listed with their line', async (t) => {
  const app = await buildApp(t);
  const tcpMirror = await writeService(
    app.store.dataDir,
    'mirror.yaml',
    'name: Mirror\ntype: mirroring\nprotocol: tcp\nconfig:\n  service: x\n',
  );
  const dangling = await writeService(
    app.store.dataDir,
    'split.yaml',
    'name: Split\ntype: weighted\nconfig:\n  services:\n    - name: ghost\n      weight: 1\n',
  );
  const invalid = await waitFor(() => {
    const files = app.store.invalidFiles().filter((f) => f.path === tcpMirror || f.path === dangling);
    return files.length === 2 ? files : null;
  }, 5000);
  const byPath = new Map(invalid.map((f) => [f.path, f]));
  t.is(byPath.get(tcpMirror)!.line, 2);
  t.is(byPath.get(dangling)!.line, 5);
  t.regex(byPath.get(dangling)!.message, /ghost/);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/services' })).body, []);
});

test('service files present at startup load whatever their order', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await writeService(
    dataDir,
    'a-split.yaml',
    'name: Split\ntype: weighted\nconfig:\n  services:\n    - name: z-web\n      weight: 1\n',
  );
  await writeService(
    dataDir,
    'z-web.yaml',
    'name: Web\ntype: loadBalancer\nconfig:\n  servers:\n    - url: http://web\n',
  );
  const app = await buildApp(t, { dataDir });
  t.deepEqual(
    (await call(app, { method: 'GET', url: '/api/services' })).body.map((s: { id: string }) => s.id),
    ['a-split', 'z-web'],
  );
  t.deepEqual((await call(app, { method: 'GET', url: '/api/services/z-web' })).body.used_by, ['/api/services/a-split']);
});
