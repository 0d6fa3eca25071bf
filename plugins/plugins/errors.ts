/** Errors of the Plugins group, built on the core catalogue ids (API.md §2.4, §4.6). */
import { AppError, errors, validationError, type ErrorDetail } from '../../core/errors/app-error.ts';

export const pluginErrors = {
  noPath: () =>
    errors.notConfigured(
      'no Traefik static config path is set; set it with PUT /api/plugins/configpath or PROXY_STATIC_CONFIG',
    ),
  /** The static config cannot be used; `line` points at the YAML error when known. */
  fileUnusable: (file: string, line: number | null, message: string) =>
    errors.conflict(`Traefik static config ${file} cannot be used: ${message}`, [
      { path: line === null ? file : `${file}:${line}`, message },
    ]),
  notMapping: (file: string, where: string, line: number | null) =>
    errors.conflict(`${where} in the Traefik static config ${file} is not a mapping; fix the file by hand`, [
      { path: line === null ? file : `${file}:${line}`, message: `${where} must be a mapping` },
    ]),
  keyTaken: (key: string, module: string, version: string | null) =>
    errors.alreadyExists(
      `plugin key ${key} already holds ${module}${version ? `@${version}` : ''}; send force=true to replace it`,
    ),
  notInstalled: (what: string) => errors.notFound(`plugin ${what} is not in the Traefik static config`),
  unknownKey: (key: string) =>
    errors.notFound(`plugin ${key} is neither in the Traefik static config nor used by a middleware`),
  inUse: (key: string, middlewares: string[]) =>
    errors.inUse(
      `plugin ${key} is used by ${middlewares.length === 1 ? 'a middleware' : `${middlewares.length} middlewares`}; remove ${middlewares.length === 1 ? 'it' : 'them'} first`,
      middlewares.map((id): ErrorDetail => ({ path: `/api/middlewares/${id}`, message: `uses plugin ${key}` })),
    ),
  catalogueDown: (message: string) =>
    errors.upstreamUnavailable(`plugin catalogue (registry) unavailable and nothing cached: ${message}`),
  notInCatalogue: (module: string) =>
    validationError([
      { path: '/version', message: `is required: ${module} is not a middleware in the plugin catalogue` },
    ]),
  invalid: (pointer: string, message: string) => validationError([{ path: pointer, message }]),
  /** A plugin zip refused by vendoring (API.md §4.20); `cause` says which check failed. */
  invalidArchive: (cause: string) => new AppError(422, 'invalid_archive', `plugin archive refused: ${cause}`),
  noLocalDir: () =>
    errors.notConfigured(
      "no plugins_local_dir is set (settings.yaml plugins_local_dir or PROXY_PLUGINS_LOCAL_DIR): the host path of Traefik's plugins-local directory",
    ),
  registryDown: (url: string, message: string) =>
    errors.upstreamUnavailable(`plugin registry download ${url} failed: ${message}`),
  notVendored: (key: string) => errors.notFound(`plugin ${key} is not vendored`),
  localDirUnusable: (dir: string, message: string) =>
    errors.conflict(`plugins_local_dir ${dir} cannot be used: ${message}`, [{ path: dir, message }]),
};
