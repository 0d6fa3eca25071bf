/**
 * Rules of the override sub-objects beyond their schemas (API.md §4.4): header names, TCP service
 * and host, mTLS availability; and the canonical stored form of each PUT body (defaults filled).
 */
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import { validationError } from '../../core/errors/app-error.ts';
import type { ResourceRecord } from '../../model/upstream-routers.ts';
import type { ResourceConfig } from '../../model/types.ts';
import { HEADER_NAME, type ConfigBody, type ConfigFileData, type ConfigKind } from '../../model/resource-config.ts';
import { tcpRuleError } from '../../model/tcp-rule.ts';
import { resourceErrors } from './errors.ts';
import { fullConfig } from './record.ts';
import { pointerToken } from '../../core/json-pointer.ts';

/** What the checks need to know about services and mTLS. */
export interface ConfigContext {
  /** Protocol of a service by id (any source), or undefined when it does not exist. */
  serviceProtocol(id: string): string | undefined;
  /** null when mTLS may be enabled, else why not. */
  mtlsUnavailable(): string | null;
}

/** Header names that are not RFC 9110 tokens, as details under `prefix` (`/request`, `/config/headers/request`…). */
function headerNameProblems(map: Record<string, string> | null | undefined, prefix: string): ErrorDetail[] {
  return Object.keys(map ?? {})
    .filter((name) => !HEADER_NAME.test(name))
    .map((name) => ({
      path: `${prefix}/${pointerToken(name)}`,
      message: 'is not a valid header name (RFC 9110 token)',
    }));
}

/**
 * A TCP rule Traefik 3.7.15 cannot parse or build disables the TCP router (model/tcp-rule.ts), as a
 * detail at `path`.
 */
function sniRuleProblems(rule: string | null | undefined, path: string): ErrorDetail[] {
  const error = typeof rule === 'string' ? tcpRuleError(rule) : null;
  return error ? [{ path, message: `is not a TCP rule Traefik can build: ${error}` }] : [];
}

/** Hand-edit check of a file's `config` (the schema covers the rest). */
export function fileConfigProblems(config: ConfigFileData | undefined): ErrorDetail[] {
  return [
    ...headerNameProblems(config?.headers?.request, '/config/headers/request'),
    ...headerNameProblems(config?.headers?.response, '/config/headers/response'),
    ...headerNameProblems(config?.mtlswhitelist?.request_headers, '/config/mtlswhitelist/request_headers'),
    ...sniRuleProblems(config?.tcp?.sni_rule, '/config/tcp/sni_rule'),
  ];
}

/** The stored form of a PUT body: the whole sub-object with nulls and absent fields at their defaults. */
export function canonicalConfig<K extends ConfigKind>(kind: K, body: ConfigBody<K>): ResourceConfig[K] {
  return fullConfig({ [kind]: body } as ConfigFileData)[kind];
}

/**
 * Checks a new sub-object against the resource and the other objects; throws 404/409/422.
 * Runs under the collection lock with the freshest record.
 */
export function checkConfig<K extends ConfigKind>(
  kind: K,
  value: ResourceConfig[K],
  record: ResourceRecord,
  ctx: ConfigContext,
): void {
  if (kind === 'headers') {
    const headers = value as ResourceConfig['headers'];
    const problems = [
      ...headerNameProblems(headers.request, '/request'),
      ...headerNameProblems(headers.response, '/response'),
    ];
    if (problems.length > 0) throw validationError(problems);
  }
  if (kind === 'mtlswhitelist') {
    const problems = headerNameProblems((value as ResourceConfig['mtlswhitelist']).request_headers, '/request_headers');
    if (problems.length > 0) throw validationError(problems);
  }
  if (kind === 'tcp') {
    const tcp = value as ResourceConfig['tcp'];
    const rule = sniRuleProblems(tcp.sni_rule, '/sni_rule');
    if (rule.length > 0) throw validationError(rule);
    if (tcp.service_id !== null) {
      const protocol = ctx.serviceProtocol(tcp.service_id);
      if (protocol === undefined) throw resourceErrors.serviceUnknown(tcp.service_id);
      if (protocol !== 'tcp') throw resourceErrors.serviceProtocol(tcp.service_id, protocol, 'tcp', '/service_id');
    }
    if (tcp.enabled && tcp.sni_rule === null && !record.host) throw resourceErrors.tcpWithoutHost(record.id);
  }
  if (kind === 'mtls' && (value as ResourceConfig['mtls']).enabled && !record.config.mtls.enabled) {
    // switching it off, or keeping it on, is always allowed: only a new enabling needs the CA
    const reason = ctx.mtlsUnavailable();
    if (reason) throw resourceErrors.mtlsUnavailable(reason);
  }
}
