/** Errors of the static configuration group, built on the core catalogue ids (API.md §2.4, §4.20). */
import { errors, validationError, type ErrorDetail } from '../../core/errors/app-error.ts';

const at = (file: string, line: number | null) => (line === null ? file : `${file}:${line}`);

export const staticErrors = {
  noStaticPath: () =>
    errors.notConfigured(
      'no Traefik static config path is set; set it with PUT /api/plugins/configpath or PROXY_STATIC_CONFIG',
    ),
  noComposeFile: () =>
    errors.notConfigured(
      "no compose file is set, so Gerbil's ports are unknown; set compose_file in settings.yaml or STACK_COMPOSE_FILE",
    ),
  noDocker: () =>
    errors.notConfigured(
      'no Docker engine is configured: DOCKER_HOST is unset and no socket is mounted where DOCKER_SOCKET points; mount the Docker socket to apply',
    ),
  /** A `services.gerbil.ports` item the apply job cannot turn into a port binding. */
  badPortItem: (file: string, index: number, message: string) =>
    errors.conflict(
      `services.gerbil.ports[${index}] in the compose file ${file} cannot be published: ${message}; nothing was changed`,
      [{ path: `${file}#services.gerbil.ports[${index}]`, message }],
    ),
  /** A file that cannot be read, parsed, edited or written: nothing was changed. */
  fileUnusable: (label: string, file: string, line: number | null, message: string) =>
    errors.conflict(`${label} ${file} cannot be used: ${message}; nothing was changed`, [
      { path: at(file, line), message },
    ]),
  notMapping: (label: string, file: string, where: string, line: number | null) =>
    errors.conflict(`${where} in the ${label} ${file} is not a mapping; fix the file by hand`, [
      { path: at(file, line), message: `${where} must be a mapping` },
    ]),
  noGerbil: (file: string) =>
    errors.conflict(`the compose file ${file} has no service gerbil (services.gerbil) to publish ports on`, [
      { path: file, message: 'services.gerbil is missing' },
    ]),
  portTaken: (name: string, port: number, protocol: string, other: string) =>
    errors.conflict(`${protocol.toUpperCase()} port ${port} is already the address of entry point ${other}`, [
      { path: `/entryPoints/${other}`, message: `listens on ${protocol} port ${port}; ${name} cannot` },
    ]),
  notFound: (name: string) => errors.notFound(`entry point ${name} is not in the Traefik static config`),
  inUse: (name: string, routers: string[]) =>
    errors.inUse(
      `entry point ${name} is used by ${routers.length === 1 ? 'a router' : `${routers.length} routers`} of the served document`,
      routers.map((router): ErrorDetail => ({ path: router, message: `uses entry point ${name}` })),
    ),
  invalid: (pointer: string, message: string) => validationError([{ path: pointer, message }]),
};
