/**
 * middleware-manager's resources → ours (API.md §4.24): a resource of ours is found by router name,
 * else by host; its middleware and service assignments and router overrides become ours. Nothing of
 * ours is overwritten: an assignment already there, or a sub-object already overridden, is skipped.
 */
import { isDeepStrictEqual } from 'node:util';
import { Value } from '@sinclair/typebox/value';
import { explainSchema } from '../../core/errors/explain.ts';
import '../../core/formats.ts'; // registers the go-duration format the schemas use
import { CONFIG_SCHEMAS, HEADER_NAME, type ConfigKind } from '../../model/resource-config.ts';
import { tcpRuleError } from '../../model/tcp-rule.ts';
import { defaultResourceConfig } from '../../model/types.ts';
import { splitKey } from '../../model/upstream-routers.ts';
import type { MmAssignment, MmResource, MmServiceAssignment } from './mm-database.ts';
import type { IdMap } from './plan-objects.ts';
import { parseJsonText, parseObject } from './plan-objects.ts';
import type { ImportPlan, OurResource, PlannedService } from './types.ts';

/** Router priorities middleware-manager stores when nobody chose one (column defaults 100, earlier 200). */
const DEFAULT_PRIORITIES = new Set([100, 200]);
const MIN_PRIORITY = 1;
const MAX_PRIORITY = 10_000;

export interface ResourceInputs {
  resources: MmResource[];
  assignments: MmAssignment[];
  serviceAssignments: MmServiceAssignment[];
  /** middleware-manager ids of every row of its tables (to tell "not in the database" from "not imported") */
  mmMiddlewares: Set<string>;
  mmServices: Set<string>;
  middlewareIds: IdMap;
  serviceIds: IdMap;
  /** services planned now, and ours: protocol by our id */
  protocolOf(id: string): string | undefined;
}

/** Adds assignments and overrides to `plan` (its skipped list and warnings too). */
export function planResources(input: ResourceInputs, ours: OurResource[], plan: ImportPlan): void {
  const taken = new Map<string, string>(); // our resource id → the middleware-manager resource that feeds it
  for (const mm of input.resources) {
    const mmId = String(mm.id);
    const mine = input.assignments.filter((a) => String(a.resource_id) === mmId);
    const services = input.serviceAssignments.filter((a) => String(a.resource_id) === mmId);
    const overrides = overridesOf(mm);
    if (mine.length === 0 && services.length === 0 && overrides.length === 0) continue; // nothing to carry over
    const skipResource = (reason: string) => plan.skipped.push({ kind: 'resource', name: mmId, reason });
    const match = matchResource(mm, ours);
    if (typeof match === 'string') {
      skipResource(
        `${match}; its ${mine.length} middleware assignment(s), ${services.length} service and ${overrides.length} override(s) are not imported`,
      );
      continue;
    }
    if (match.status !== 'active') {
      skipResource(`matches ${match.id}, which is disabled (its router is gone upstream)`);
      continue;
    }
    const earlier = taken.get(match.id);
    if (earlier) {
      skipResource(`matches ${match.id}, which ${earlier} already feeds`);
      continue;
    }
    taken.set(match.id, mmId);
    const tcp = planOverrides(mmId, match, overrides, plan);
    planAssignments(input, mmId, match, mine, services, tcp, plan);
  }
}

/** By router (`id` is the router key, with or without `@provider`), then by name, then by host. */
function matchResource(mm: MmResource, ours: OurResource[]): OurResource | string {
  const key = String(mm.id);
  const base = splitKey(key).name;
  const exact = ours.filter((r) => r.router === key || r.name === base || splitKey(r.router).name === base);
  if (exact.length === 1) return exact[0];
  const folded = ours.filter((r) => r.name.toLowerCase() === base.toLowerCase());
  if (folded.length === 1) return folded[0];
  const host = String(mm.host ?? '').toLowerCase();
  const byHost = host ? ours.filter((r) => r.hosts.some((h) => h.toLowerCase() === host)) : [];
  const active = byHost.filter((r) => r.status === 'active');
  if (byHost.length === 1) return byHost[0];
  if (active.length === 1) return active[0];
  if (byHost.length > 1) return `host ${host} matches several resources (${byHost.map((r) => r.id).join(', ')})`;
  return `no resource has router ${key} or host ${host || '(none)'}`;
}

type Wanted = { kind: ConfigKind; config: Record<string, unknown> } | { kind: ConfigKind; problem: string };

/** The overrides a middleware-manager resource carries (columns left at their defaults carry none). */
function overridesOf(mm: MmResource): Wanted[] {
  const wanted: Wanted[] = [];
  const list = (text: string | null) =>
    String(text ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const entrypoints = list(mm.entrypoints);
  if (entrypoints.length > 0) wanted.push({ kind: 'http', config: { entrypoints } });
  const sans = list(mm.tls_domains);
  // its generated router had tls {certResolver: letsencrypt, domains: [{main: host, sans}]}; the resolver is upstream's
  if (sans.length > 0) wanted.push({ kind: 'tls', config: { domains: [{ main: String(mm.host), sans }] } });
  if (Number(mm.tcp_enabled) === 1) {
    const tcpEntrypoints = list(mm.tcp_entrypoints);
    wanted.push({
      kind: 'tcp',
      config: {
        enabled: true,
        entrypoints: tcpEntrypoints.length ? tcpEntrypoints : ['tcp'],
        sni_rule: mm.tcp_sni_rule?.trim() || null,
        service_id: null,
      },
    });
  }
  const headersText = String(mm.custom_headers ?? '').trim();
  if (headersText && headersText !== '{}' && headersText !== 'null') {
    const headers = parseObject(headersText);
    wanted.push(
      typeof headers === 'string'
        ? { kind: 'headers', problem: `custom_headers ${headers}` }
        : { kind: 'headers', config: { request: headers } },
    );
  }
  const priority = mm.router_priority === null ? null : Number(mm.router_priority);
  if (priority !== null && !DEFAULT_PRIORITIES.has(priority)) wanted.push({ kind: 'priority', config: { priority } });
  const mtls = mtlsWhitelist(mm);
  if (mtls) wanted.push(mtls);
  return wanted;
}

/** mtls_* columns (newer versions) → the resource's mtlswhitelist override; all empty → none. */
function mtlsWhitelist(mm: MmResource): Wanted | null {
  const config: Record<string, unknown> = {};
  const json = (column: keyof MmResource, field: string): string | null => {
    const text = String(mm[column] ?? '').trim();
    if (!text) return null;
    const parsed = parseJsonText(text);
    if (typeof parsed === 'string') return `${column} ${parsed}`;
    config[field] = parsed.value;
    return null;
  };
  const problem =
    json('mtls_rules', 'rules') ??
    json('mtls_request_headers', 'request_headers') ??
    json('mtls_external_data', 'external_data');
  if (mm.mtls_reject_message?.trim()) config.reject_message = mm.mtls_reject_message.trim();
  const interval = String(mm.mtls_refresh_interval ?? '').trim();
  if (interval) config.refresh_interval = /^[0-9]+$/.test(interval) ? Number(interval) : interval;
  const anything = Object.keys(config).length > 0 || problem !== null;
  // 403 is the column default: only carried when the code was changed or comes with other settings
  if (mm.mtls_reject_code !== null && (anything || Number(mm.mtls_reject_code) !== 403))
    config.reject_code = Number(mm.mtls_reject_code);
  if (problem) return { kind: 'mtlswhitelist', problem };
  return Object.keys(config).length > 0 ? { kind: 'mtlswhitelist', config } : null;
}

/** Plans each wanted override that is valid, differs from upstream and would not replace one of ours; returns the tcp one. */
function planOverrides(
  mmId: string,
  resource: OurResource,
  wanted: Wanted[],
  plan: ImportPlan,
): Record<string, unknown> | null {
  let tcp: Record<string, unknown> | null = null;
  const defaults = defaultResourceConfig();
  for (const want of wanted) {
    const name = `${resource.id} ${want.kind}`;
    const skip = (reason: string) => plan.skipped.push({ kind: 'override', name, reason });
    if ('problem' in want) {
      skip(want.problem);
      continue;
    }
    if (sameAsUpstream(want, resource)) continue; // nothing to carry over
    const problem =
      want.kind === 'tcp' && !want.config.sni_rule && !resource.host
        ? `${resource.id} has no host for the default HostSNI rule and tcp_sni_rule is empty`
        : configProblem(want.kind, want.config);
    if (problem) {
      skip(problem);
      continue;
    }
    const current = resource.config[want.kind] as unknown as Record<string, unknown>;
    const desired = { ...(defaults[want.kind] as unknown as Record<string, unknown>), ...normalised(want) };
    if (isDeepStrictEqual(current, desired)) {
      skip('already set');
      continue;
    }
    if (!isDeepStrictEqual(current, defaults[want.kind])) {
      skip(`${resource.id} already overrides ${want.kind}; ours is kept`);
      continue;
    }
    const planned = { resource_id: resource.id, kind: want.kind, config: want.config, from: mmId, previous: current };
    plan.overrides.push(planned);
    if (want.kind === 'tcp') tcp = planned.config;
  }
  return tcp;
}

function sameAsUpstream(want: { kind: ConfigKind; config: Record<string, unknown> }, resource: OurResource): boolean {
  if (want.kind === 'http') {
    const wanted = [...(want.config.entrypoints as string[])].sort();
    return isDeepStrictEqual(wanted, [...resource.entrypoints].sort());
  }
  if (want.kind === 'priority') return resource.priority !== null && Number(resource.priority) === want.config.priority;
  return false;
}

/** The sub-object as the resource will hold it (tls domain `sans` default to []). */
function normalised(want: { kind: ConfigKind; config: Record<string, unknown> }): Record<string, unknown> {
  if (want.kind === 'headers') return { request: want.config.request, response: {} };
  return want.config;
}

/** The sub-object's schema (model/resource-config.ts) and header names (RFC 9110 tokens). */
function configProblem(kind: ConfigKind, config: Record<string, unknown>): string | null {
  const schema = CONFIG_SCHEMAS[kind];
  const maps = [config.request, config.request_headers];
  if (!Value.Check(schema, config)) {
    // the explainer's message, as the API and hand edits give it ("must NOT have more than 1024 characters"), not TypeBox's "Expected union value"
    const explained = explainSchema(schema, config)[0];
    if (explained) return `${kind}${explained.path} ${explained.message}`;
    const first = [...Value.Errors(schema, config)][0];
    return `${kind}${first?.path ?? ''} ${first?.message ?? 'is invalid'}`;
  }
  for (const map of maps)
    if (map && typeof map === 'object')
      for (const header of Object.keys(map))
        if (!HEADER_NAME.test(header)) return `header name "${header}" is not an RFC 9110 token`;
  // a rule Traefik cannot build would disable the TCP router
  const sni = (config as Record<string, unknown>).sni_rule;
  const rule = kind === 'tcp' && typeof sni === 'string' ? tcpRuleError(sni) : null;
  if (rule) return `tcp_sni_rule ${JSON.stringify(sni)} is not a TCP rule Traefik can build: ${rule}`;
  return null;
}

function planAssignments(
  input: ResourceInputs,
  mmId: string,
  resource: OurResource,
  rows: MmAssignment[],
  services: MmServiceAssignment[],
  tcp: Record<string, unknown> | null,
  plan: ImportPlan,
): void {
  const name = (what: string) => `${resource.id} ← ${what}`;
  for (const row of rows) {
    const mmMiddleware = String(row.middleware_id);
    const skip = (reason: string) => plan.skipped.push({ kind: 'assignment', name: name(mmMiddleware), reason });
    const id = input.middlewareIds.get(mmMiddleware);
    if (!id) {
      skip(
        input.mmMiddlewares.has(mmMiddleware)
          ? `middleware ${mmMiddleware} is not imported`
          : `middleware ${mmMiddleware} is not in the database`,
      );
      continue;
    }
    const present = resource.middlewares.find((m) => m.id === id);
    if (present) {
      skip(`${id} is already assigned (priority ${present.priority})`);
      continue;
    }
    let priority = row.priority === null || Number(row.priority) === 0 ? null : Number(row.priority);
    if (priority !== null && (priority < MIN_PRIORITY || priority > MAX_PRIORITY)) {
      const clamped = Math.min(MAX_PRIORITY, Math.max(MIN_PRIORITY, Math.trunc(priority)));
      plan.warnings.push(
        `${name(id)}: priority ${priority} is outside ${MIN_PRIORITY}–${MAX_PRIORITY}, imported as ${clamped}`,
      );
      priority = clamped;
    }
    plan.assignments.push({ resource_id: resource.id, kind: 'middleware', id, priority, from: mmId });
  }
  for (const row of services) {
    const mmService = String(row.service_id);
    const skip = (reason: string) => plan.skipped.push({ kind: 'assignment', name: name(mmService), reason });
    const id = input.serviceIds.get(mmService);
    if (!id) {
      skip(
        input.mmServices.has(mmService)
          ? `service ${mmService} is not imported`
          : `service ${mmService} is not in the database`,
      );
      continue;
    }
    if (input.protocolOf(id) === 'tcp') {
      if (tcp) tcp.service_id = id;
      else if (resource.config.tcp.service_id !== id)
        skip(`${id} is a tcp service: it is assigned through the tcp override, which this resource does not get`);
      continue;
    }
    if (resource.service_id === id) skip(`${id} is already assigned`);
    else if (resource.service_id) skip(`${resource.id} keeps its service ${resource.service_id}`);
    else plan.assignments.push({ resource_id: resource.id, kind: 'service', id, priority: null, from: mmId });
  }
}

/** Protocol lookup over the planned services and ours. */
export function protocols(planned: PlannedService[], ours: Array<{ id: string; protocol: string }>) {
  const map = new Map<string, string>([
    ...ours.map((s) => [s.id, s.protocol] as const),
    ...planned.map((s) => [s.id, s.protocol] as const),
  ]);
  return (id: string) => map.get(id);
}
