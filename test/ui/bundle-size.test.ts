/**
 * Budget (issue 9): the JavaScript loaded before any screen (the entry chunk and its static
 * imports) stays ≤ 120 KB gzip; every screen is its own chunk; nothing refers to another origin.
 */
import test from 'ava';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ensureUiBuilt } from './ui-build.ts';

interface Chunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  src?: string;
}

test('initial JavaScript ≤ 120 KB gzip, screens split by route, no other origin in the bundle', async (t) => {
  t.timeout(300_000);
  const DIST = await ensureUiBuilt();
  const manifest = JSON.parse(await readFile(path.join(DIST, '.vite', 'manifest.json'), 'utf8')) as Record<
    string,
    Chunk
  >;
  const entry = Object.entries(manifest).find(([, chunk]) => chunk.isEntry);
  t.truthy(entry, 'an entry chunk');
  const initial = new Set<string>();
  const visit = (key: string) => {
    if (initial.has(key)) return;
    initial.add(key);
    for (const next of manifest[key].imports ?? []) visit(next);
  };
  visit(entry![0]);
  let gzip = 0;
  for (const key of initial) gzip += gzipSync(await readFile(path.join(DIST, manifest[key].file))).length;
  t.log(`initial JavaScript: ${initial.size} file(s), ${(gzip / 1024).toFixed(1)} KB gzip`);
  t.true(gzip <= 120 * 1024, `initial JS is ${gzip} bytes gzip`);

  const screens = Object.keys(manifest).filter(
    (key) => key.startsWith('src/screens/') && !key.includes('/resource/') && !key.includes('/objects/'),
  );
  t.true(screens.length >= 15, `one chunk per screen (${screens.length})`);
  for (const key of screens) t.false(initial.has(key), `${key} is not in the initial bundle`);
  const gzipOf = async (key: string) => gzipSync(await readFile(path.join(DIST, manifest[key].file))).length;
  const sizes: string[] = [];
  const totals: string[] = [];
  for (const key of screens) {
    // what opening the screen downloads after the shell: its chunk and the shared chunks it imports
    const route = new Set<string>();
    const add = (next: string) => {
      if (initial.has(next) || route.has(next)) return;
      route.add(next);
      for (const more of manifest[next].imports ?? []) add(more);
    };
    add(key);
    let total = 0;
    for (const part of route) total += await gzipOf(part);
    sizes.push(`${path.basename(key, '.tsx')} ${((await gzipOf(key)) / 1024).toFixed(1)}`);
    totals.push(`${path.basename(key, '.tsx')} ${(total / 1024).toFixed(1)}`);
  }
  t.log(`screen chunks (KB gzip, own chunk only): ${sizes.join(', ')}`);
  t.log(
    `per route after the shell (KB gzip, own chunk + shared chunks it imports; lazy parts like uPlot not counted): ${totals.join(', ')}`,
  );

  for (const file of await readdir(path.join(DIST, 'assets'))) {
    const text = await readFile(path.join(DIST, 'assets', file), 'utf8');
    // URLs in code that the page would load: script/style/font/img sources and fetches
    t.notRegex(text, /(src|href)=["']https?:\/\//, `${file} loads from another origin`);
    t.notRegex(
      text,
      /@import\s+url\(["']?https?:|url\(["']?https?:\/\//,
      `${file} loads CSS resources from another origin`,
    );
  }
  const index = await readFile(path.join(DIST, 'index.html'), 'utf8');
  t.notRegex(index, /https?:\/\//, 'index.html names no other origin');
});
