/**
 * Middlewares of middleware-manager → ours, and the planning middlewares and services share (API.md
 * §4.24). Matched by name: one whose name we already have is not created, and assignments use ours.
 * Each new one is checked with the owning group's own rules (its hand-edit check); one that fails
 * is skipped with the reason.
 */
import { isObject, SLUG } from '../../core/ids.ts';
import { valueFault } from '../../core/nesting.ts';
import { uniqueSlug } from '../../model/ids.ts';
import { MIDDLEWARE_TYPES } from '../middlewares/schemas.ts';
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import type { MmMiddleware } from './mm-database.ts';
import type { OurState, PlannedMiddleware, Skipped } from './types.ts';

/** middleware-manager id → our id (created now or already ours); absent: not importable. */
export type IdMap = Map<string, string>;

export interface Candidate<P> {
  planned: P;
  /** middleware-manager ids this one references (chain members, service references) */
  refs: string[];
  /** JSON Pointers of those references inside `config` */
  refPaths: Set<string>;
}

/** Plans the middlewares; `ids` gets every middleware-manager id that can be assigned. */
export function planMiddlewares(
  rows: MmMiddleware[],
  ours: OurState,
  skipped: Skipped[],
  warnings: string[],
): { planned: PlannedMiddleware[]; ids: IdMap } {
  const known = new Set(rows.map((r) => String(r.id)));
  return planObjects<PlannedMiddleware>({
    kind: 'middleware',
    rows,
    existing: ours.middlewares,
    idTaken: (id) => ours.middlewareIdTaken(id),
    build: (row, id, name, config) => {
      if (!(MIDDLEWARE_TYPES as readonly string[]).includes(row.type))
        return `type ${row.type} is not supported (HTTP middlewares only: ${MIDDLEWARE_TYPES.join(', ')})`;
      const members = row.type === 'chain' && Array.isArray(config.middlewares) ? config.middlewares : [];
      const refs: string[] = [];
      const refPaths = new Set<string>();
      // middleware-manager's own middlewares are `<id>@file` (its file provider); ours have no provider suffix
      const rewritten = members.map((member, i) => {
        const mm = typeof member === 'string' ? ownReference(member, known) : null;
        if (typeof member === 'string') warnDangling(warnings, `middleware ${name}`, member, known);
        if (mm === null) return member;
        refs.push(mm);
        refPaths.add(`/config/middlewares/${i}`);
        return mm; // replaced by our id once every id is known
      });
      const planned = {
        id,
        name,
        type: row.type,
        config: members.length ? { ...config, middlewares: rewritten } : config,
        from: String(row.id),
      };
      return { planned, refs, refPaths };
    },
    rewrite: (planned, ids) => {
      if (planned.type !== 'chain' || !Array.isArray(planned.config.middlewares)) return;
      planned.config.middlewares = planned.config.middlewares.map((m) =>
        typeof m === 'string' && ids.has(m) && !m.includes('@') ? ids.get(m) : m,
      );
    },
    check: (p) => ours.checkMiddleware(p.id, { name: p.name, type: p.type, config: p.config }),
    skipped,
  });
}

export interface PlanInput<P extends PlannedMiddleware> {
  kind: 'middleware' | 'service';
  rows: MmMiddleware[];
  existing: Array<{ id: string; name: string; type: string; config: Record<string, unknown> }>;
  idTaken(id: string): boolean;
  /** the planned object with middleware-manager ids in its references, or why it cannot be imported */
  build(row: MmMiddleware, id: string, name: string, config: Record<string, unknown>): Candidate<P> | string;
  /** references → our ids, once every id is known */
  rewrite(planned: P, ids: IdMap): void;
  check(planned: P): ErrorDetail[];
  /** rules between objects of this import, which the group cannot check before they exist */
  crossCheck?(planned: P, pending: Map<string, P>): string | null;
  skipped: Skipped[];
}

export function planObjects<P extends PlannedMiddleware>(input: PlanInput<P>): { planned: P[]; ids: IdMap } {
  const { kind, skipped } = input;
  const ids: IdMap = new Map();
  const candidates = new Map<string, Candidate<P>>();
  const reserved = new Set<string>();
  const byName = new Map(input.existing.map((o) => [o.name.trim().toLowerCase(), o]));
  const pendingByName = new Map<string, string>();
  for (const row of input.rows) {
    const mmId = String(row.id);
    const name = (typeof row.name === 'string' && row.name.trim()) || mmId;
    const skip = (reason: string) => skipped.push({ kind, name, reason });
    const config = parseObject(row.config);
    if (typeof config === 'string') {
      skip(`config ${config}`);
      continue;
    }
    const mine = byName.get(name.toLowerCase());
    if (mine) {
      ids.set(mmId, mine.id);
      const same = mine.type === row.type && JSON.stringify(mine.config) === JSON.stringify(config);
      skip(
        `a ${kind} named "${mine.name}" exists (${mine.id})${same ? '' : ' with another type or config'}; assignments use it`,
      );
      continue;
    }
    const twin = pendingByName.get(name.toLowerCase());
    if (twin) {
      ids.set(mmId, ids.get(twin)!);
      skip(`same name as ${twin} in the database; assignments use that one`);
      continue;
    }
    const taken = (id: string) => reserved.has(id) || input.idTaken(id);
    const id = SLUG.test(mmId) && !taken(mmId) ? mmId : uniqueSlug(name, kind, taken);
    const built = input.build(row, id, name, config);
    if (typeof built === 'string') {
      skip(built);
      continue;
    }
    reserved.add(id);
    ids.set(mmId, id);
    pendingByName.set(name.toLowerCase(), mmId);
    candidates.set(mmId, built);
  }
  // references to objects that are not imported, and cycles, drop the referrer (until nothing changes)
  const drop = (mmId: string, reason: string) => {
    const c = candidates.get(mmId)!;
    candidates.delete(mmId);
    ids.delete(mmId);
    skipped.push({ kind, name: c.planned.name, reason });
  };
  for (const c of candidates.values()) input.rewrite(c.planned, ids);
  for (const [mmId, c] of [...candidates]) {
    const problems = input
      .check(c.planned)
      .filter((p) => !(c.refPaths.has(p.path) && referencedPending(c, p.path, candidates)));
    if (problems.length > 0) drop(mmId, describe(problems));
  }
  if (input.crossCheck) {
    const pending = new Map([...candidates.values()].map((c) => [c.planned.id, c.planned]));
    for (const [mmId, c] of [...candidates]) {
      const problem = input.crossCheck(c.planned, pending);
      if (problem) drop(mmId, problem);
    }
  }
  let changed = true;
  while (changed) {
    changed = false;
    for (const [mmId, c] of [...candidates]) {
      const lost = c.refs.find((ref) => !ids.has(ref));
      if (lost !== undefined) {
        drop(mmId, `refers to ${lost}, which is not imported`);
        changed = true;
      }
    }
  }
  const order = topological(candidates);
  for (const [mmId, c] of [...candidates])
    if (!order.includes(mmId)) drop(mmId, `is part of a reference cycle (${c.refs.join(', ')})`);
  return { planned: order.map((mmId) => candidates.get(mmId)!.planned), ids };
}

/** Whether the reference at `path` names an object planned in this import (the group cannot see it yet). */
function referencedPending<P extends PlannedMiddleware>(
  c: Candidate<P>,
  path: string,
  candidates: Map<string, Candidate<P>>,
): boolean {
  const pending = new Set([...candidates.values()].map((o) => o.planned.id));
  const value = path
    .split('/')
    .slice(2)
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], c.planned.config);
  return typeof value === 'string' && pending.has(value);
}

/** Creation order: an object after the ones it references; members of a cycle are left out. */
function topological<P>(candidates: Map<string, Candidate<P>>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done' | 'cycle'>();
  const visit = (mmId: string): boolean => {
    const seen = state.get(mmId);
    if (seen === 'done') return true;
    if (seen === 'visiting' || seen === 'cycle') return false;
    state.set(mmId, 'visiting');
    const ok = candidates.get(mmId)!.refs.every((ref) => !candidates.has(ref) || visit(ref));
    state.set(mmId, ok ? 'done' : 'cycle');
    if (ok) order.push(mmId);
    return ok;
  };
  for (const mmId of candidates.keys()) visit(mmId);
  return order;
}

/** `<id>@file` or a bare `<id>` naming one of the database's own objects → that id; anything else → null. */
export function ownReference(value: string, known: Set<string>): string | null {
  const at = value.lastIndexOf('@');
  const base = at < 0 ? value : value.slice(0, at);
  const provider = at < 0 ? 'file' : value.slice(at + 1);
  return provider === 'file' && known.has(base) ? base : null;
}

/** A `<name>@file` that is not one of the database's objects is kept, with a warning: Traefik's file provider must have it. */
export function warnDangling(warnings: string[], who: string, value: string, known: Set<string>): void {
  if (value.endsWith('@file') && !known.has(value.slice(0, -'@file'.length)))
    warnings.push(
      `${who} refers to ${value}, which is not in the database: kept as is (Traefik's file provider must define it)`,
    );
}

/** The JSON object in `text`, or what is wrong with it. */
export function parseObject(text: unknown): Record<string, unknown> | string {
  if (typeof text !== 'string') return 'is not JSON text';
  const parsed = parseJsonText(text);
  if (typeof parsed === 'string') return parsed;
  return isObject(parsed.value) ? parsed.value : 'is not a JSON object';
}

/**
 * The value of JSON text from the database, or what is wrong with it: not JSON, or a value the API
 * would refuse at its parser (API.md §2.10: more than 64 levels of arrays/objects, which the
 * recursive checks downstream must never see; a number beyond ±1.8e308).
 */
export function parseJsonText(text: string): { value: unknown } | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'is not valid JSON';
  }
  const fault = valueFault(value);
  return fault ? `${fault.path ? `at ${fault.path} ` : ''}${fault.message}` : { value };
}

/** `path message` of the first problem, and how many more there are. */
export function describe(problems: ErrorDetail[]): string {
  const first = problems[0];
  const where = first.path ? `${first.path.replace(/^\//, '')} ` : '';
  return `${where}${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`;
}
