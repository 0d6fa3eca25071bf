/** Helpers of the provider-target tests: an app on a fake Pangolin, listening on 127.0.0.1, and HTTP calls through undici. */
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { ExecutionContext } from 'ava';
import { Ajv } from 'ajv';
import { request } from 'undici';
import { harness, type Harness } from '../resources/support.ts';
import { SHARED } from '../helpers/shared.ts';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** the body bytes as received (gzip when the server compressed) */
  bytes: Buffer;
  /** the body as text, gunzipped when needed */
  text: string;
  json: any;
}

export interface Client {
  call(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
}

export interface TargetHarness extends Harness, Client {
  base: string;
}

/** A fake Pangolin and an app polling it (auth off), listening on an ephemeral loopback port. */
export async function targetHarness(
  t: ExecutionContext,
  options: Parameters<typeof harness>[1] = {},
): Promise<TargetHarness> {
  const h = await harness(t, options);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  await h.app.proxyConfig.regenerate();
  return { ...h, base, call: client(base).call };
}

/** HTTP calls against `base` (a real socket; undici never decompresses by itself). */
export function client(base: string, defaults: Record<string, string> = {}): Client {
  return {
    async call(method, url, body, headers = {}) {
      const response = await request(base + url, {
        method: method as 'GET',
        headers: {
          ...defaults,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const bytes = Buffer.from(await response.body.arrayBuffer());
      const text = (response.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: response.statusCode, headers: response.headers, bytes, text, json };
    },
  };
}

const schema = JSON.parse(readFileSync(path.join(SHARED, 'schemas', 'traefik-v3-file-provider.json'), 'utf8'));
/** Traefik's dynamic-configuration JSON Schema (the shipped copy), compiled once. */
export const validateTraefik = new Ajv({ allErrors: true }).compile(schema);

/** Routers of one protocol section of a served document. */
export const routersOf = (doc: any, protocol = 'http'): string[] => Object.keys(doc?.[protocol]?.routers ?? {}).sort();
