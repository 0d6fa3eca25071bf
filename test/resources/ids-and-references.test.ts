import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  assertClientError,
  call,
  createMiddleware,
  createService,
  GRAFANA,
  harness,
  NEXTCLOUD,
  resourceFiles,
} from './support.ts';

// sent over a real socket with node:http, which keeps the path as written (inject's URL parser would resolve `..`)
const BAD_IDS = [
  'a%2Fb',
  '..',
  '%2E%2E',
  '%2E%2E%2Fsettings',
  '%00',
  'a%00b',
  'x'.repeat(300),
  'UPPER',
  '-lead',
  'a_b',
  'caf%C3%A9',
];

/** One request over a real socket, path bytes untouched. */
function raw(port: number, method: string, path: string, payload?: object): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const body = payload === undefined ? undefined : JSON.stringify(payload);
    const request = http.request(
      { host: '127.0.0.1', port, method, path, headers: body ? { 'content-type': 'application/json' } : {} },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

test.serial(
  'malformed ids (/, .., NUL, 300 chars, upper case…) answer 4xx {id, message} on every route and change no file',
  async (t) => {
    const { app, dataDir } = await harness(t);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    await createMiddleware(t, app, {
      id: 'rate-limit',
      name: 'Rate limit',
      type: 'rateLimit',
      config: { average: 1, burst: 1 },
    });
    const files = await resourceFiles(dataDir);
    for (const id of BAD_IDS) {
      const base = `/api/resources/${id}`;
      const requests = [
        { method: 'GET' as const, url: base },
        { method: 'DELETE' as const, url: base },
        { method: 'POST' as const, url: `${base}/middlewares`, payload: { middleware_id: 'rate-limit' } },
        {
          method: 'POST' as const,
          url: `${base}/middlewares/bulk`,
          payload: { middlewares: [{ middleware_id: 'rate-limit' }] },
        },
        { method: 'DELETE' as const, url: `${base}/middlewares/rate-limit` },
        { method: 'GET' as const, url: `${base}/external-middlewares` },
        { method: 'POST' as const, url: `${base}/external-middlewares`, payload: { name: 'crowdsec@file' } },
        { method: 'GET' as const, url: `${base}/service` },
        { method: 'PUT' as const, url: `${base}/config/http`, payload: { entrypoints: ['web'] } },
        { method: 'PUT' as const, url: `${base}/config/priority`, payload: { priority: 5 } },
      ];
      for (const request of requests) {
        const r = await raw(port, request.method, request.url, 'payload' in request ? request.payload : undefined);
        assertClientError(t, r);
        t.true([404, 422].includes(r.status), `${request.method} ${request.url} → ${r.status}`);
      }
    }
    // bad sub-ids on a real resource
    for (const suffix of [
      'middlewares/Rate%20Limit',
      'middlewares/%00',
      'external-middlewares/a%2Fb',
      'external-middlewares/%00',
      `middlewares/${'m'.repeat(300)}`,
    ]) {
      assertClientError(t, await raw(port, 'DELETE', `/api/resources/${NEXTCLOUD}/${suffix}`));
    }
    t.deepEqual(await resourceFiles(dataDir), files);
  },
);

test.serial(
  'DELETE /api/middlewares/:id answers 409 in_use while a resource uses it; force=true removes the assignments',
  async (t) => {
    const { app } = await harness(t);
    await createMiddleware(t, app, {
      id: 'rate-limit',
      name: 'Rate limit',
      type: 'rateLimit',
      config: { average: 1, burst: 1 },
    });
    for (const id of [NEXTCLOUD, GRAFANA]) {
      t.is(
        (
          await call(app, {
            method: 'POST',
            url: `/api/resources/${id}/middlewares`,
            payload: { middleware_id: 'rate-limit' },
          })
        ).status,
        200,
      );
    }
    const r = await call(app, { method: 'DELETE', url: '/api/middlewares/rate-limit' });
    assertClientError(t, r, 409, 'in_use');
    t.deepEqual(
      r.body.details.map((d: any) => d.path),
      [`/api/resources/${NEXTCLOUD}`, `/api/resources/${GRAFANA}`].sort(),
    );

    t.is((await call(app, { method: 'DELETE', url: '/api/middlewares/rate-limit?force=true' })).status, 204);
    for (const id of [NEXTCLOUD, GRAFANA]) {
      const view = (await call(app, { url: `/api/resources/${id}` })).body;
      t.deepEqual(view.middlewares, []);
      t.false(view.emitted);
    }
  },
);

test.serial(
  'DELETE /api/services/:id answers 409 in_use while a resource uses it (service_id or config.tcp.service_id)',
  async (t) => {
    const { app } = await harness(t);
    await createService(t, app, {
      id: 'app-v2',
      name: 'App v2',
      type: 'loadBalancer',
      config: { servers: [{ url: 'http://10.0.0.7:8080' }] },
    });
    await createService(t, app, {
      id: 'ssh',
      name: 'SSH',
      type: 'loadBalancer',
      protocol: 'tcp',
      config: { servers: [{ address: '10.0.0.7:22' }] },
    });
    await call(app, { method: 'POST', url: `/api/resources/${NEXTCLOUD}/service`, payload: { service_id: 'app-v2' } });
    await call(app, {
      method: 'PUT',
      url: `/api/resources/${GRAFANA}/config/tcp`,
      payload: { enabled: true, service_id: 'ssh' },
    });

    let r = await call(app, { method: 'DELETE', url: '/api/services/app-v2' });
    assertClientError(t, r, 409, 'in_use');
    t.deepEqual(
      r.body.details.map((d: any) => d.path),
      [`/api/resources/${NEXTCLOUD}`],
    );
    r = await call(app, { method: 'DELETE', url: '/api/services/ssh' });
    assertClientError(t, r, 409, 'in_use');
    t.deepEqual(
      r.body.details.map((d: any) => d.path),
      [`/api/resources/${GRAFANA}`],
    );
    t.deepEqual((await call(app, { url: '/api/services/ssh' })).body.used_by, [`/api/resources/${GRAFANA}`]);

    t.is((await call(app, { method: 'DELETE', url: `/api/resources/${NEXTCLOUD}/service` })).status, 204);
    t.is((await call(app, { method: 'DELETE', url: '/api/services/app-v2' })).status, 204);
  },
);
