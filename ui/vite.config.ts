/** Builds the operator UI into ui/dist, which the server serves at `/` (API.md §4.18). */
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const TEMPLATES = 'virtual:templates';
/** The shipped middleware/service templates (config/templates/*.yaml) as JSON, read at build time: one source of truth. */
function templates() {
  const dir = path.join(import.meta.dirname, '..', 'config', 'templates');
  return {
    name: 'stack-manager-templates',
    resolveId: (id: string) => (id === TEMPLATES ? '\0' + TEMPLATES : null),
    load(id: string) {
      if (id !== '\0' + TEMPLATES) return null;
      const read = (file: string) => parse(readFileSync(path.join(dir, file), 'utf8'));
      return `export const middlewareTemplates = ${JSON.stringify(read('middlewares.yaml').middlewares ?? [])};\nexport const serviceTemplates = ${JSON.stringify(read('services.yaml').services ?? [])};`;
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [preact({ prefreshEnabled: false, devToolsEnabled: false }), templates()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // the budget check (test/ui/bundle-size.test.ts) reads this manifest to find the initial chunks
    manifest: true,
    target: 'es2022',
    chunkSizeWarningLimit: 600,
    // Rolldown warns ([PLUGIN_TIMINGS]) when plugin callbacks take a large share of a slow build: it
    // says how busy the machine was, not what is wrong with the code (a clean-clone CI run at load 9
    // printed it for vite:css-post); the other build warnings stay on
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  server: {
    // `npm run dev:ui` against a running server on :3456
    proxy: { '/api': { target: 'http://127.0.0.1:3456', ws: true } },
  },
});
