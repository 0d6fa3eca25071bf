/**
 * CrowdSec decisions (API.md §4.23): list with the bouncer key, add and delete through the machine
 * API, manual bans refused on allowlisted targets.
 */
import { CrowdSecError, type CrowdSecClient, type LapiDecision } from './crowdsec-client.ts';
import type { DecisionCreateBody, DecisionsCreatedView, ManagedDecisionView } from './decision-schemas.ts';
import { ipErrors } from './errors.ts';
import { goDurationMs } from './go-duration.ts';
import { parseTarget, type Target } from './ip-range.ts';
import type { ErrorDetail } from '../../core/errors/app-error.ts';

/** Durations a manual decision or an allowlist TTL may have (API.md §4.23). */
export const MIN_DURATION_MS = 60_000;
export const MAX_DURATION_MS = 8760 * 3_600_000;
export const DEFAULT_DECISION_DURATION = '4h';

export interface DecisionFilter {
  value?: string;
  scope?: 'ip' | 'range';
  type?: string;
  origin?: string;
  scenario?: string;
}

export interface DecisionServiceOptions {
  crowdsec: CrowdSecClient;
  /** Active allowlist entries that overlap a target (a ban on them is refused). */
  allowlistedBy: (target: Target) => { id: string; value: string }[];
  /** Seconds until Traefik's bouncer feels a change (effective.ts). */
  effectiveWithinS: () => number | null;
  now: () => Date;
}

export class DecisionService {
  constructor(private readonly options: DecisionServiceOptions) {}

  /** Active decisions matching every given filter, by id. */
  async list(filter: DecisionFilter): Promise<ManagedDecisionView[]> {
    const { crowdsec } = this.options;
    if (!crowdsec.hasBouncer()) throw ipErrors.noBouncer();
    const found = await upstream(() =>
      crowdsec.listDecisions({ scope: filter.scope, value: filter.value, type: filter.type }),
    );
    const now = this.options.now().getTime();
    return found
      .filter(
        (d) =>
          (!filter.scope || String(d.scope).toLowerCase() === filter.scope) &&
          (!filter.value || d.value === filter.value) &&
          (!filter.type || d.type === filter.type) &&
          (!filter.origin || d.origin === filter.origin) &&
          (!filter.scenario || d.scenario === filter.scenario),
      )
      .map((d) => toManaged(d, now))
      .sort((a, b) => a.id - b.id);
  }

  /** Validates everything before anything reaches LAPI; 409 `allowlisted` when an entry overlaps. */
  async add(body: DecisionCreateBody): Promise<DecisionsCreatedView> {
    const details: ErrorDetail[] = [];
    const target = parseTarget(body.value);
    if ('error' in target) details.push({ path: '/value', message: target.error });
    const duration = body.duration ?? DEFAULT_DECISION_DURATION;
    const durationError = checkDuration(duration);
    if (durationError) details.push({ path: '/duration', message: durationError });
    const reason = body.reason?.trim() ?? '';
    if (CONTROL.test(reason)) details.push({ path: '/reason', message: 'must not contain control characters' });
    if (details.length > 0 || 'error' in target) throw ipErrors.validation(details);

    const { crowdsec } = this.options;
    if (!crowdsec.hasMachine()) throw ipErrors.noMachine('add decisions');
    const by = this.options.allowlistedBy(target);
    if (by.length > 0) throw ipErrors.allowlisted(target.value, by);
    const type = body.type ?? 'ban';
    const created = await upstream(() =>
      crowdsec.addDecision({
        value: target.value,
        scope: target.scope,
        type,
        duration,
        // cscli's default reason, naming us instead of the machine login
        reason: reason || `manual '${type}' from 'stack-manager'`,
      }),
    );
    const now = this.options.now().getTime();
    return {
      decisions: created.map((d) => toManaged(d, now)),
      effective_within_s: this.options.effectiveWithinS(),
    };
  }

  /** Deletes one active decision (404 when no active decision has that id); answers what it was and `effective_within_s`. */
  async delete(id: number): Promise<{ removed: LapiDecision; effectiveWithinS: number | null }> {
    const { crowdsec } = this.options;
    if (!crowdsec.hasMachine()) throw ipErrors.noMachine('delete decisions');
    if (!crowdsec.hasBouncer()) throw ipErrors.noBouncer();
    // LAPI answers 500 for an unknown id and 200 again for one already deleted: look first
    const active = await upstream(() => crowdsec.listDecisions());
    const removed = active.find((d) => d.id === id);
    if (!removed) throw ipErrors.decisionNotFound(id);
    await upstream(() => crowdsec.deleteDecision(id));
    return { removed, effectiveWithinS: this.options.effectiveWithinS() };
  }
}

// control characters are exactly what this pattern is for (a reason ends up in LAPI and cscli tables)
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why a Go duration is not one LAPI should get (1m–8760h), or null. */
export function checkDuration(text: string): string | null {
  const ms = goDurationMs(text);
  if (ms === null || !/^[0-9]/.test(text.trim()))
    return `must be a Go duration such as 30m, 4h or 1h30m (got ${JSON.stringify(text)})`;
  if (ms < MIN_DURATION_MS || ms > MAX_DURATION_MS) return `must be between 1m and 8760h (got ${text})`;
  return null;
}

/** Runs a LAPI call, turning its failures into 502 `upstream_unavailable`. */
export async function upstream<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof CrowdSecError) throw ipErrors.crowdsec(err.message);
    throw err;
  }
}

/** When a decision ends: now + its remaining Go duration, null when it has none (or it does not parse). */
export function expiresAt(d: LapiDecision, now: number): string | null {
  const remaining = typeof d.duration === 'string' ? goDurationMs(d.duration) : null;
  return remaining === null ? null : new Date(now + Math.round(remaining)).toISOString();
}

export function toManaged(d: LapiDecision, now: number): ManagedDecisionView {
  return {
    id: d.id,
    origin: String(d.origin ?? ''),
    type: String(d.type ?? ''),
    scope: String(d.scope ?? ''),
    value: String(d.value ?? ''),
    scenario: String(d.scenario ?? ''),
    duration: String(d.duration ?? ''),
    expires_at: expiresAt(d, now),
    // the bouncer endpoints leave simulated decisions out; alert answers say so themselves
    simulated: d.simulated === true,
  };
}
