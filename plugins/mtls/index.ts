/**
 * The mTLS group (API.md §4.8): opens `mtls/config.yaml` and the `mtls/clients` collection,
 * decorates `app.mtls` (what the resources group and the config generator read: G6–G8) and serves
 * /api/mtls in its own scope.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { GroupOptions } from '../../core/types.ts';
import type { MtlsState } from '../../model/types.ts';
import { staticConfigPath } from '../middlewares/index.ts';
import { StaticConfigReader } from '../../model/static-config.ts';
import { ifMatchOf, ifNoneMatchHits, paginate, quoteEtag } from '../../model/http.ts';
import { isTrue } from '../../model/schemas.ts';
import { normalizeMiddlewareBody } from './body.ts';
import { ClientService } from './clients.ts';
import { mtlsErrors } from './errors.ts';
import { MtlsFiles } from './files.ts';
import { ClientFile, ConfigFile, schemas, type ClientData, type ConfigFileData } from './schemas.ts';
import { MtlsService } from './service.ts';
import { CLIENT_CERT_HEADER } from './verify.ts';

/** What other groups use of mTLS (resources and proxy-config, which declare this group as a dependency). */
export interface MtlsApi {
  hasCa(): boolean;
  /** Globally enabled and a CA exists. */
  enabled(): boolean;
  /** The mTLS input of the config generator. */
  generatorState(): MtlsState;
}

declare module 'fastify' {
  interface FastifyInstance {
    mtls: MtlsApi;
  }
}

async function mtls(app: FastifyInstance, _options: GroupOptions): Promise<void> {
  const log = app.log.child({ component: 'mtls' });
  const config = await app.store.document<ConfigFileData>({
    path: 'mtls/config.yaml',
    schema: ConfigFile,
    initial: () => ({}),
    dirMode: 0o700,
  });
  const files = new MtlsFiles(app.store);
  // assigned once the collection exists; the collection's check callback needs it (and runs only after)
  // eslint-disable-next-line prefer-const
  let clientService: ClientService | undefined;
  const clients = await app.store.collection<ClientData>({
    name: 'mtls/clients',
    schema: ClientFile,
    check: (_id, data) => clientService?.checkFile(data) ?? [],
  });
  await files.secureDirs();
  const service = new MtlsService({
    config,
    clients,
    files,
    log,
    staticConfig: new StaticConfigReader(() => staticConfigPath(app)),
    now: () => app.now(),
    settings: app.config.mtls,
  });
  clientService = new ClientService(clients, service, files, () => app.now());
  await service.open();

  const fail = (what: string) => (err: unknown) => log.error({ err }, `mTLS: ${what} failed`);
  const unsubscribe = [
    clients.onChange((event) => {
      service.revocation.invalidate();
      if (event.source === 'file' || event.source === 'restore')
        clientService!.handEdited(event.previous, event.object).catch(fail('applying a hand-edited client file'));
    }),
    config.onChange((_value, source) => {
      service.revocation.invalidate();
      // a hand edit or a restore may come with other CA files: take them as they are now
      if (source !== 'file' && source !== 'restore' && source !== 'cluster') return;
      try {
        service.reloadCa();
      } catch (err) {
        fail('reloading the CA')(err);
      }
    }),
  ];
  // a running CA, client or CRL write finishes before the store closes
  app.addHook('preClose', async () => {
    await service.queue.run(async () => undefined);
  });
  app.addHook('onClose', async () => {
    for (const off of unsubscribe) off();
    service.revocation.close();
  });

  app.decorate('mtls', {
    hasCa: () => service.hasCa(),
    enabled: () => service.enabled(),
    generatorState: () => service.generatorState(),
  } satisfies MtlsApi);

  await app.register(routes, { service, clients: clientService });
  await app.register(verifyRoute, { service });
}

/** The HTTP routes (class C), encapsulated so their hooks never leak. */
async function routes(
  parent: FastifyInstance,
  { service, clients }: { service: MtlsService; clients: ClientService },
): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const auth = { auth: 'config' as const };
  const sendConfig = (reply: FastifyReply, status = 200) => {
    const view = service.view();
    return reply.code(status).header('etag', quoteEtag(view.etag)).send(view);
  };

  scope.get('/api/mtls/config', { config: auth, schema: schemas.getConfig }, async (request, reply) => {
    if (ifNoneMatchHits(request.headers['if-none-match'], service.etag()))
      return reply.header('etag', quoteEtag(service.etag())).code(304).send();
    return sendConfig(reply);
  });
  scope.put('/api/mtls/enable', { config: auth, schema: schemas.enable }, async (request, reply) => {
    await service.setEnabled(true, ifMatchOf(request));
    return sendConfig(reply);
  });
  scope.put('/api/mtls/disable', { config: auth, schema: schemas.disable }, async (request, reply) => {
    await service.setEnabled(false, ifMatchOf(request));
    return sendConfig(reply);
  });
  scope.post('/api/mtls/ca', { config: auth, schema: schemas.createCa }, async (request, reply) => {
    const { force } = request.query;
    await service.createCa(request.body, isTrue(force), ifMatchOf(request));
    return sendConfig(reply.header('location', '/api/mtls/config'), 201);
  });
  scope.delete('/api/mtls/ca', { config: auth, schema: schemas.deleteCa }, async (request, reply) => {
    const { force } = request.query;
    await service.deleteCa(isTrue(force), ifMatchOf(request));
    return reply.code(204).send();
  });

  scope.get('/api/mtls/clients', { config: auth, schema: schemas.listClients }, async (request, reply) =>
    paginate(request, reply, clients.list(), request.query),
  );
  scope.post('/api/mtls/clients', { config: auth, schema: schemas.createClient }, async (request, reply) => {
    const view = await clients.create(request.body);
    return reply
      .code(201)
      .header('location', `/api/mtls/clients/${view.id}`)
      .header('etag', quoteEtag(view.etag))
      .send(view);
  });
  scope.get('/api/mtls/clients/:id', { config: auth, schema: schemas.getClient }, async (request, reply) => {
    const id = request.params.id;
    const view = clients.get(id);
    if (!view) throw mtlsErrors.clientNotFound(id);
    reply.header('etag', quoteEtag(view.etag));
    if (ifNoneMatchHits(request.headers['if-none-match'], view.etag)) return reply.code(304).send();
    return { ...view, cert: await clients.certificate(id) };
  });
  scope.get('/api/mtls/clients/:id/download', { config: auth, schema: schemas.download }, async (request, reply) => {
    const id = request.params.id;
    const bundle = await clients.download(id);
    return reply
      .type('application/x-pkcs12')
      .header('content-disposition', `attachment; filename="${id}.p12"`)
      .header('cache-control', 'no-store')
      .send(bundle);
  });
  scope.put('/api/mtls/clients/:id/revoke', { config: auth, schema: schemas.revoke }, async (request, reply) => {
    const view = await clients.revoke(request.params.id, ifMatchOf(request));
    return reply.header('etag', quoteEtag(view.etag)).send(view);
  });
  scope.delete('/api/mtls/clients/:id', { config: auth, schema: schemas.deleteClient }, async (request, reply) => {
    await clients.remove(request.params.id, ifMatchOf(request));
    return reply.code(204).send();
  });

  scope.get('/api/mtls/plugin/check', { config: auth, schema: schemas.pluginCheck }, async () => service.pluginCheck());
  scope.get('/api/mtls/middleware/config', { config: auth, schema: schemas.getMiddleware }, async (_request, reply) =>
    reply.header('etag', quoteEtag(service.etag())).send(service.middlewareConfig()),
  );
  scope.put(
    '/api/mtls/middleware/config',
    { config: auth, schema: schemas.putMiddleware, preValidation: normalizeMiddlewareBody },
    async (request, reply) => {
      const middleware = await service.replaceMiddlewareConfig(request.body, ifMatchOf(request));
      return reply.header('etag', quoteEtag(service.etag())).send(middleware);
    },
  );
  scope.get('/api/mtls/crl', { config: auth, schema: schemas.crl }, async (request, reply) => {
    const { format = 'pem' } = request.query;
    const crl = await service.crl(format);
    if (!crl) throw mtlsErrors.caNotFound();
    return reply.type(format === 'der' ? 'application/pkix-crl' : 'application/x-pem-file').send(crl);
  });
}

/**
 * Traefik's forwardAuth target (class P). Any method, any body: Traefik may preserve the request's
 * method and forward its body, which is never read here. Logged at warn only, as it runs per request.
 */
async function verifyRoute(parent: FastifyInstance, { service }: { service: MtlsService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  scope.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/api/mtls/verify',
    // a check on behalf of the client's request: not audited, and the client's Accept is not ours to judge
    config: { auth: 'public', audit: false, versioned: false },
    logLevel: 'warn',
    schema: schemas.verify,
    handler: async (request, reply) => {
      const serial = service.revokedSerial(request.headers[CLIENT_CERT_HEADER]);
      if (serial !== null) {
        request.log.warn({ serial }, 'mTLS: revoked client certificate refused');
        throw mtlsErrors.revoked(service.middlewareConfig().reject_message);
      }
      return reply.code(200).send();
    },
  });
}

export default fp(mtls, {
  name: 'mtls',
  dependencies: ['middlewares'],
  decorators: { fastify: ['store', 'settings', 'config', 'now'] },
});
