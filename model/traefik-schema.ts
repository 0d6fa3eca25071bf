/**
 * Strict validation of Traefik objects (`config` of middlewares and services) against one
 * definition of the Traefik v3 file-provider JSON Schema (API.md §4.2, §4.3; TESTING.md "Ajv").
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { PROJECT_ROOT } from '../core/config/load.ts';
import type { ErrorDetail } from '../core/errors/app-error.ts';
import { numberProblems } from './traefik-numbers.ts';
import { pointerToken } from '../core/json-pointer.ts';

/** Shipped with the server (config/schemas/SOURCE.md): validation must not depend on test material. */
export const DEFAULT_TRAEFIK_SCHEMA_PATH = path.resolve(
  PROJECT_ROOT,
  'config',
  'schemas',
  'traefik-v3-file-provider.json',
);

/** Outcome of a check: hard errors, and unknown keys (errors unless unknown fields are allowed). */
export interface TraefikCheck {
  errors: ErrorDetail[];
  unknown: ErrorDetail[];
}

const BRANCH = /\/oneOf\/[0-9]+\/type$/;

/**
 * Loads the schema once; compiles each definition on first use, as a schema of its own carrying
 * the file's definitions for its `$ref`s. Compiling `{$ref: "<file>#/definitions/X"}` against the
 * added file instead made Ajv compile the whole file-provider schema: 160 ms of every start that
 * has a middleware, where one definition takes 10–30 ms (issue 11).
 */
export class TraefikSchema {
  private ajv: Ajv | null = null;
  private readonly id: string;
  private readonly schema: { definitions: Record<string, object> };
  private readonly compiled = new Map<string, ValidateFunction>();

  /** Throws a clear error when the file is missing or not a JSON Schema (startup must fail). */
  constructor(readonly file: string = DEFAULT_TRAEFIK_SCHEMA_PATH) {
    if (!existsSync(file))
      throw new Error(
        `Traefik JSON Schema not found at ${file}: it is needed to validate middleware and service configs`,
      );
    let schema: { $id?: string; definitions?: Record<string, unknown> };
    try {
      schema = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`Traefik JSON Schema at ${file} cannot be read: ${(err as Error).message}`, { cause: err });
    }
    if (!schema.definitions || typeof schema.definitions !== 'object')
      throw new Error(`Traefik JSON Schema at ${file} has no definitions`);
    this.id = schema.$id ?? 'traefik-v3-file-provider.json';
    this.schema = schema as { definitions: Record<string, object> };
    closeOpenObjects(this.schema.definitions);
  }

  /** One instance per schema file for the whole process: the middlewares and services groups share it. */
  static shared(file: string = DEFAULT_TRAEFIK_SCHEMA_PATH): TraefikSchema {
    let schema = shared.get(file);
    if (!schema) shared.set(file, (schema = new TraefikSchema(file)));
    return schema;
  }

  has(definition: string): boolean {
    return Object.hasOwn(this.schema.definitions, definition);
  }

  /** Validates `value` against `definition`; pointers are prefixed with `prefix` (e.g. `/config`). */
  check(definition: string, value: unknown, prefix: string, label: string): TraefikCheck {
    const validate = this.validator(definition);
    const numbers = numberProblems(value, prefix, definition);
    if (validate(value)) return { errors: numbers, unknown: [] };
    const summary = summarise(validate.errors ?? [], prefix, label);
    for (const problem of numbers)
      if (!summary.errors.some((e) => e.path === problem.path)) summary.errors.push(problem);
    return summary;
  }

  private validator(definition: string): ValidateFunction {
    let validate = this.compiled.get(definition);
    if (!validate) {
      if (!this.has(definition)) throw new Error(`Traefik JSON Schema has no definition ${definition}`);
      // draft-07, Ajv's default dialect: no options beyond allErrors are needed (TESTING.md)
      this.ajv ??= new Ajv({ allErrors: true });
      const { definitions } = this.schema;
      validate = this.ajv.compile({
        ...definitions[definition],
        $id: `${this.id}/${definition}`,
        definitions,
      });
      this.compiled.set(definition, validate);
    }
    return validate;
  }
}

const shared = new Map<string, TraefikSchema>();

/**
 * Objects the SchemaStore schema leaves open (no additionalProperties: false) although Traefik
 * decodes them into Go structs: an unknown key there passed our check and Traefik then refused the
 * WHOLE provider document ('field not found, node: <key>', Traefik 3.5.3 and 3.7.15), keeping the
 * previous one. Closed here with the keys Traefik 3.5–3.7 decode; `add` holds the keys both 3.5.3
 * and 3.7.15 decode that the schema lacks (each probed with the file provider of both binaries).
 * Keys only newer versions decode are not added: they are in VERSIONED_KEYS (traefik-versions.ts),
 * which takes them out of the unknown ones and gates them on proxy.traefik_version. Pointers into
 * `definitions`; the file itself stays SchemaStore's copy (config/schemas/SOURCE.md).
 */
const LB = ['httpLoadBalancerService', 'properties'];
const WEIGHTED = ['httpWeightedService', 'properties'];
const COOKIE_KEYS = { maxAge: { type: 'integer' } };
const OPEN_STRUCTS: Array<{ at: string[]; add?: Record<string, object> }> = [
  // middlewares (54b035f)
  { at: ['basicAuthMiddleware'] },
  { at: ['forwardAuthMiddleware', 'properties', 'tls'] },
  { at: ['passTLSClientCertMiddleware', 'properties', 'info'], add: { serialNumber: { type: 'boolean' } } },
  {
    at: ['passTLSClientCertMiddleware', 'properties', 'info', 'properties', 'subject'],
    add: { organizationalUnit: { type: 'boolean' } },
  },
  { at: ['passTLSClientCertMiddleware', 'properties', 'info', 'properties', 'issuer'] },
  // HTTP services. A server's fenced/scheme/port are Traefik-internal fields both versions decode
  // without complaint (and ignore): accepted, never refused.
  { at: [...LB, 'servers', 'items'], add: { weight: { type: 'integer' }, fenced: {}, scheme: {}, port: {} } },
  { at: [...LB, 'sticky'] },
  { at: [...LB, 'sticky', 'properties', 'cookie'], add: COOKIE_KEYS },
  { at: [...LB, 'healthCheck'], add: { mode: { type: 'string' }, status: { type: 'integer' } } },
  { at: [...LB, 'responseForwarding'] },
  { at: [...WEIGHTED, 'services', 'items'], add: { status: {} } },
  { at: [...WEIGHTED, 'sticky'] },
  { at: [...WEIGHTED, 'sticky', 'properties', 'cookie'], add: COOKIE_KEYS },
  // Traefik's dynamic.HealthCheck has no field: any key inside is refused
  { at: [...WEIGHTED, 'healthCheck'] },
  { at: ['httpMirroringService', 'properties', 'mirrors', 'items'] },
  { at: ['httpMirroringService', 'properties', 'healthCheck'] },
  { at: ['httpFailoverService', 'properties', 'healthCheck'] },
  // TCP/UDP services (a TCP server's tls: both versions decode it)
  { at: ['tcpLoadBalancerService', 'properties', 'servers', 'items'], add: { tls: { type: 'boolean' } } },
  { at: ['tcpLoadBalancerService', 'properties', 'proxyProtocol'] },
  { at: ['udpLoadBalancerService', 'properties', 'servers', 'items'] },
];

/**
 * Objects the schema lacks altogether, under a key only newer Traefik versions decode (gated in
 * VERSIONED_KEYS): added, closed, so an unknown key inside is refused too. Value types are left open
 * (Traefik 3.7.15 decodes maxFailedAttempts given as 3 or "3"); keys measured with Traefik 3.7.15.
 */
const MISSING_OBJECTS: Array<{ at: string[]; key: string; keys: string[] }> = [
  { at: ['httpLoadBalancerService'], key: 'passiveHealthCheck', keys: ['failureWindow', 'maxFailedAttempts'] },
  // Traefik 3.6+ TCPServerHealthCheck; a TCP weighted service's healthCheck has no field
  {
    at: ['tcpLoadBalancerService'],
    key: 'healthCheck',
    keys: ['port', 'send', 'expect', 'interval', 'unhealthyInterval', 'timeout'],
  },
  { at: ['tcpWeightedService'], key: 'healthCheck', keys: [] },
  // Traefik 3.7+ FailoverError
  { at: ['httpFailoverService'], key: 'errors', keys: ['maxRequestBodyBytes', 'status'] },
];

function closeOpenObjects(definitions: Record<string, object>): void {
  const nodeAt = (at: string[]) => {
    let node: Record<string, unknown> | undefined = definitions as Record<string, unknown>;
    for (const key of at) node = node?.[key] as Record<string, unknown> | undefined;
    return node;
  };
  for (const { at, key, keys } of MISSING_OBJECTS) {
    const node = nodeAt(at);
    if (!node || typeof node.properties !== 'object' || Object.hasOwn(node.properties as object, key)) continue;
    node.properties = {
      ...(node.properties as object),
      [key]: { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, {}])), additionalProperties: false },
    };
  }
  for (const { at, add } of OPEN_STRUCTS) {
    const node = nodeAt(at);
    if (!node || node.type !== 'object' || node.additionalProperties !== undefined) continue;
    node.properties = { ...(node.properties as object | undefined), ...add };
    node.additionalProperties = false;
  }
}

/**
 * Turns Ajv errors into one detail per problem. A failed `oneOf` of plain types (rateLimit
 * `average`: string or number) is reported once as "must be string or number" instead of three times.
 */
function summarise(errors: ErrorObject[], prefix: string, label: string): TraefikCheck {
  const out: TraefikCheck = { errors: [], unknown: [] };
  const seen = new Set<string>();
  const add = (list: ErrorDetail[], path: string, message: string) => {
    if (seen.has(path + '\0' + message)) return;
    seen.add(path + '\0' + message);
    list.push({ path, message });
  };
  const oneOfTypes = new Map<string, string[]>();
  for (const e of errors) {
    if (e.keyword === 'type' && BRANCH.test(e.schemaPath)) {
      const types = oneOfTypes.get(e.instancePath) ?? [];
      types.push(String(e.params.type));
      oneOfTypes.set(e.instancePath, types);
    }
  }
  for (const e of errors) {
    const at = prefix + e.instancePath;
    if (e.keyword === 'additionalProperties') {
      add(
        out.unknown,
        `${at}/${pointerToken(String(e.params.additionalProperty))}`,
        `is not a known field of ${label}`,
      );
    } else if (e.keyword === 'required') {
      add(out.errors, `${at}/${pointerToken(String(e.params.missingProperty))}`, 'is required');
    } else if (e.keyword === 'type' && BRANCH.test(e.schemaPath)) {
      add(out.errors, at, `must be ${oneOfTypes.get(e.instancePath)!.join(' or ')}`);
    } else if (e.keyword === 'oneOf') {
      const explained = out.errors.some((d) => d.path === at || d.path.startsWith(at + '/'));
      if (!explained && !oneOfTypes.has(e.instancePath)) add(out.errors, at, e.message ?? 'is invalid');
    } else {
      add(out.errors, at, e.message ?? 'is invalid');
    }
  }
  return out;
}
