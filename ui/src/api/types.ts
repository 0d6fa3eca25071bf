/** Named shapes taken from the generated schema, so screens use the server's own field types. */
import type { paths } from './schema';

type Method = 'get' | 'post' | 'put' | 'delete';
/** The JSON body of `status` for `method path`. */
export type Reply<P extends keyof paths, M extends Method, S extends number = 200> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? T
  : never;
/** The JSON request body of `method path`. */
export type Body<P extends keyof paths, M extends Method> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer T } } } ? T : never;

export type Health = Reply<'/api/health', 'get'>;
export type ConfigStatus = Reply<'/api/proxy-config/status', 'get'>;
export type Resource = Reply<'/api/resources/{id}', 'get'>;
export type Middleware = Reply<'/api/middlewares/{id}', 'get'>;
export type Target = Reply<'/api/proxy-config/targets/{id}', 'get'>;
export type Service = Reply<'/api/services/{id}', 'get'>;
export type DataSource = Reply<'/api/datasource/active', 'get'>;
export type DataSourceTest = Reply<'/api/datasource/{name}/test', 'post'>;
export type TraefikPlugin = Reply<'/api/plugins', 'get'>[number];
export type CatalogueEntry = Reply<'/api/plugins/catalogue', 'get'>[number];
export type MtlsConfig = Reply<'/api/mtls/config', 'get'>;
export type MtlsClient = Reply<'/api/mtls/clients', 'get'>[number];
export type Backup = Reply<'/api/backup/list', 'get'>[number];
export type RestoreResult = Reply<'/api/backup/restore', 'post'>;
export type Container = Reply<'/api/container/containers', 'get'>[number];
export type ImageUpdate = Reply<'/api/container/updates', 'get'>[number];
export type IpSecurity = Reply<'/api/ip/security/{ip}', 'get'>;
export type Token = Reply<'/api/auth/tokens', 'get'>[number];
export type CreatedToken = Reply<'/api/auth/tokens', 'post', 201>;
export type AccessStats = Reply<'/api/logs/proxy/advanced', 'get'>;
export type MiddlewareType = Body<'/api/middlewares', 'post'>['type'];

/** A job (API.md §4.14), e.g. a container update with its steps. */
export type Job = Reply<'/api/jobs/{id}', 'get'>;
export type JobStep = Job['steps'][number];
export type WhoAmI = Reply<'/api/auth/whoami', 'get'>;
/** One upstream check of GET /api/health?deep=true. */
export type HealthCheck = NonNullable<Health['checks']>[keyof NonNullable<Health['checks']>];
