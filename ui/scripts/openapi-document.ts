/**
 * Builds the real app in-process on a throwaway data dir and returns its OpenAPI document, so the
 * UI's types come from the same TypeBox schemas that validate requests (no server, no network).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../../core/app.ts';
import { loadConfig } from '../../core/config/load.ts';
import { builtinGroups } from '../../plugins/index.ts';

const EMPTY_CONFIG = path.join(import.meta.dirname, '..', '..', 'test', 'helpers', 'empty.yaml');

/** The document `GET /api/openapi.json` serves for the built-in groups (auth off, no templates). */
export async function openapiDocument(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sm-openapi-'));
  try {
    const config = loadConfig({
      env: { CONFIG_FILE: EMPTY_CONFIG },
      overrides: {
        log: { level: 'silent' },
        auth: { mode: 'off' },
        storage: { data_dir: path.join(dir, 'data') },
        backup: { dir: path.join(dir, 'backups') },
        plugins: { dir: path.join(dir, 'no-plugins') },
        templates: { seed: false },
        docker: { host: '', socket: path.join(dir, 'no-docker.sock') },
        // nothing listens here: the app must not reach out while it only describes itself
        datasources: { pangolin_url: 'http://127.0.0.1:9/api/v1', traefik_url: 'http://127.0.0.1:9' },
      },
    });
    const app = await buildApp({ config, groups: builtinGroups, logger: false });
    try {
      await app.ready();
      const reply = await app.inject({ method: 'GET', url: '/api/openapi.json' });
      if (reply.statusCode !== 200) throw new Error(`GET /api/openapi.json answered ${reply.statusCode}: ${reply.body}`);
      return reply.json();
    } finally {
      await app.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
