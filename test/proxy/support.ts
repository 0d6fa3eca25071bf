/** Shared setup of the Proxy explorer tests: an app pointed at a private fake Traefik, fixture texts. */
import { readFileSync } from 'node:fs';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { parse, stringify } from 'lossless-json';
import { parseLossless } from '../../model/lossless-json.ts';
import { build, type BuildTestOptions } from '../helpers/build.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { fixture } from '../helpers/shared.ts';

/** A fake Traefik for this test only (counts and faults stay private), closed when the test ends. */
export async function privateFake(t: ExecutionContext): Promise<FakeUpstream> {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  return fake;
}

/**
 * An app whose `traefik` data source is `fake`; the active source stays `pangolin` (so the discovery
 * poller reads only /api/v1/traefik-config and never the Traefik lists the tests count).
 */
export async function buildFor(
  t: ExecutionContext,
  fake: FakeUpstream,
  options: BuildTestOptions = {},
): Promise<FastifyInstance> {
  const app = await build(t, {
    ...options,
    config: {
      auth: { mode: 'off' },
      datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url },
      ...options.config,
      // the version gate (G14) reads /api/version from the explorer source in the background unless
      // the version is set: these tests count the requests the explorer itself sends
      proxy: { traefik_version: '3.7.15', ...(options.config?.proxy as Record<string, unknown> | undefined) },
      // the live checker (§4.19) reads every Traefik list 10 s after a generation: not during these tests
      live: { settle_s: 3600, interval_s: 86_400, ...(options.config?.live as Record<string, unknown> | undefined) },
    },
  });
  // the fake runs in this process: on a loaded CI machine (Docker and CrowdSec tests beside it) its
  // answers can take seconds, so tests that are not about timeouts give it the longest timeout
  // (apps built with auth on are the auth tests', which need no upstream answer)
  if (app.config.auth.mode !== 'off') return app;
  const relaxed = await app.inject({ method: 'PUT', url: '/api/datasource/traefik', payload: { timeout_ms: 60000 } });
  if (relaxed.statusCode !== 200) throw new Error(`could not set the test timeout: ${relaxed.body}`);
  return app;
}

/** A clock the test moves by hand (app.now), starting at a fixed instant. */
export function manualClock(): { now: () => Date; advance: (ms: number) => void } {
  let ms = Date.parse('2026-01-01T00:00:00.000Z');
  return {
    now: () => new Date(ms),
    advance: (delta) => {
      ms += delta;
    },
  };
}

const text = (file: string): string => readFileSync(fixture('traefik-api', file), 'utf8');

/** The fixture as Traefik sends it, minified with every number kept as written (LosslessNumber): the exact expected bytes. */
export const exactFixture = (file: string): string => stringify(parse(text(file)))!;

/** The fixture parsed as the app parses it (BigInt above 2^53−1). */
export const parsedFixture = <T = Array<Record<string, unknown>>>(file: string): T => parseLossless(text(file)) as T;

/** The response body parsed losslessly (MaxInt64 priorities stay BigInt). */
export const bodyOf = <T = unknown>(response: LightMyRequestResponse): T => parseLossless(response.body) as T;

/** Requests the fake received for a Traefik API path (query ignored). */
export const hits = (fake: FakeUpstream, path: string): number =>
  fake.requests.filter((request) => request.url.split('?')[0] === path).length;

/** Asserts an error reply `{id, message}` of API.md §2.4. */
export function assertError(
  t: ExecutionContext,
  response: LightMyRequestResponse,
  status: number,
  id: string,
): { id: string; message: string; details?: Array<{ path: string; message: string }> } {
  t.is(response.statusCode, status, response.body);
  const body = response.json() as { id: string; message: string; details?: Array<{ path: string; message: string }> };
  t.is(body.id, id);
  t.is(typeof body.message, 'string');
  return body;
}
