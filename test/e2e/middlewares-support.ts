/**
 * Helpers of the middleware end-to-end tests: create a middleware and assign it through Stack
 * Manager's API, then wait until the real Traefik has built it into the resource's router and
 * report what Traefik says about both (status and verbatim errors).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import type { Stack } from '../helpers/traefik-stack.ts';
import { pangolinDocument, type Backend, type Traefik } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

/** POST /api/middlewares; fails the test with Stack Manager's answer unless 201. */
export async function createMiddleware(
  stack: Stack,
  body: { id: string; type: string; config: Record<string, unknown>; name?: string },
): Promise<any> {
  const reply = await stack.sm.call('POST', '/api/middlewares', { name: body.id, ...body });
  if (reply.status !== 201) throw new Error(`POST /api/middlewares ${body.id}: ${reply.status} ${reply.text}`);
  return reply.json;
}

/** POST /api/resources/:id/middlewares (an upsert: re-posting changes the priority). */
export async function assign(stack: Stack, resource: string, middleware: string, priority = 100): Promise<any> {
  const reply = await stack.sm.call('POST', `/api/resources/${resource}/middlewares`, {
    middleware_id: middleware,
    priority,
  });
  if (reply.status !== 200) throw new Error(`assign ${middleware} to ${resource}: ${reply.status} ${reply.text}`);
  return reply.json;
}

/** Traefik's view of a router and the middlewares it uses. */
export interface Loaded {
  router: any;
  middlewares: any[];
}

/**
 * Waits until Traefik's router `<router>@http` lists exactly `middlewares` (ids of ours, in this
 * order, before the upstream ones), then returns Traefik's router and middleware objects. The
 * caller asserts `status`/`error`: a middleware Traefik cannot build disables the router.
 */
export async function waitForLoaded(traefik: Traefik, router: string, middlewares: string[]): Promise<Loaded> {
  const wanted = middlewares.map((id) => `${id}@http`);
  let last: any;
  try {
    last = await waitFor(async () => {
      const found = await traefik.api(`/api/http/routers/${encodeURIComponent(`${router}@http`)}`).catch(() => null);
      last = found;
      const names: string[] = found?.middlewares ?? [];
      return wanted.every((name, i) => names[i] === name) ? found : null;
    }, 5_000);
  } catch (error) {
    throw new Error(`router ${router} never listed ${wanted.join(', ')}: ${JSON.stringify(last)}`, { cause: error });
  }
  const loaded = await Promise.all(
    wanted.map((name) => traefik.api(`/api/http/middlewares/${encodeURIComponent(name)}`)),
  );
  return { router: last, middlewares: loaded };
}

/**
 * Asserts Traefik built the router and every middleware without error; Traefik's own words are
 * in the failure message.
 */
export function assertEnabled(t: ExecutionContext, loaded: Loaded): void {
  for (const middleware of loaded.middlewares) {
    t.deepEqual(
      { name: middleware.name, status: middleware.status, error: middleware.error },
      { name: middleware.name, status: 'enabled', error: undefined },
      `Traefik on middleware ${middleware.name}: ${JSON.stringify(middleware)}`,
    );
  }
  t.deepEqual(
    { status: loaded.router.status, error: loaded.router.error },
    { status: 'enabled', error: undefined },
    `Traefik on router ${loaded.router.name}: ${JSON.stringify(loaded.router)}`,
  );
}

/** `1-app-router` for `{id: 1, name: 'app'}`: the Pangolin router key and the resource id alike. */
export const routerOf = (resource: { id: number; name: string }) => `${resource.id}-${resource.name}-router`;

/**
 * Adds Pangolin resources (one `-router`, `-router-redirect` and `-service` each, on `backend`) to
 * the fake Pangolin's document and waits until Stack Manager has discovered every one of them.
 */
export async function addResources(
  stack: Stack,
  resources: Array<{ id: number; name: string; host: string; path?: string }>,
  backend = stack.backends[0],
): Promise<void> {
  const added = pangolinDocument(resources.map((resource) => ({ ...resource, backends: [backend] }))) as any;
  const http = (stack.pangolin.document as any).http;
  Object.assign(http.routers, added.http.routers);
  Object.assign(http.services, added.http.services);
  await waitFor(async () => {
    const replies = await Promise.all(resources.map((r) => stack.sm.call('GET', `/api/resources/${routerOf(r)}`)));
    return replies.every((reply) => reply.status === 200 && (reply.json as any).status === 'active');
  }, 5_000);
}

/** A loopback HTTP server for one test role (an auth server, a failing backend); closed after the file. */
export async function startServer(
  t: ExecutionContext,
  handler: http.RequestListener,
): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Points a Pangolin resource's service at `url` in a Pangolin document (startStack's `editDocument`). */
export function serveFrom(document: Record<string, any>, resource: { id: number; name: string }, url: string): void {
  document.http.services[`${resource.id}-${resource.name}-service`].loadBalancer.servers = [{ url }];
}

/** Requests one backend received for one Host. */
export const seenBy = (backend: Backend, host: string) =>
  backend.requests.filter((request) => request.headers.host === host);
