/** IP addresses domain logic (API.md §4.12): CrowdSec decisions, alerts and unban, allow-lists, public IP. */
import type { StoredObject } from '../../core/store/types.ts';
import type { MiddlewareData } from '../middlewares/schemas.ts';
import { allowlistedBy } from './allowlist.ts';
import { CrowdSecError, type CrowdSecClient, type LapiAlert, type LapiDecision } from './crowdsec-client.ts';
import { ipErrors } from './errors.ts';
import { expiresAt, upstream } from './decisions-service.ts';
import { ipVersion } from './ip-address.ts';
import type { PublicIpFinder } from './public-ip.ts';
import type { AlertView, BlockedView, DecisionView, PublicIpView, SecurityView, UnbanView } from './schemas.ts';

export interface IpServiceOptions {
  crowdsec: CrowdSecClient;
  publicIp: PublicIpFinder;
  /** Our stored middlewares (the allow-lists are read from these). */
  middlewares: () => StoredObject<MiddlewareData>[];
  alertsLimit: number;
  /** Seconds until Traefik's bouncer feels a change (effective.ts). */
  effectiveWithinS: () => number | null;
  now: () => Date;
}

export const NO_MACHINE_WARNING =
  'alerts not read: CrowdSec machine credentials are not configured (crowdsec.machine_id, crowdsec.machine_password)';

export class IpService {
  constructor(private readonly options: IpServiceOptions) {}

  /** Throws 422 unless `value` is one IPv4/IPv6 address; `pointer` names the field. */
  checkIp(value: string, pointer: string): string {
    if (ipVersion(value) === 0) throw ipErrors.invalidIp(pointer);
    return value;
  }

  /** The public IP (cache or providers) plus the caller's address; 502 when no provider answered usably. */
  async publicIp(refresh: boolean, callerIp: string): Promise<PublicIpView> {
    const result = await this.options.publicIp.lookup(refresh);
    if (!result.ok) throw ipErrors.noPublicIp(result.failures);
    return { ...result.value, cached: result.cached, caller_ip: callerIp };
  }

  /** Decisions that apply to the IP (range decisions included). */
  async blocked(ip: string): Promise<BlockedView> {
    const decisions = await this.decisions(ip);
    return { ip, blocked: decisions.length > 0, decisions };
  }

  /** Decisions are required (502 when LAPI fails); alerts degrade to a warning when they cannot be read. */
  async security(ip: string): Promise<SecurityView> {
    const warnings: string[] = [];
    const [decisions, alerts] = await Promise.all([this.decisions(ip), this.alerts(ip, warnings)]);
    return {
      ip,
      blocked: decisions.length > 0,
      decisions,
      alerts,
      allowlisted_by: allowlistedBy(ip, this.options.middlewares()),
      warnings,
      checked_at: this.options.now().toISOString(),
    };
  }

  /** Deletes the decisions on the IP (machine JWT), then re-reads decisions (bouncer key) for `still_blocked`. */
  async unban(ip: string): Promise<UnbanView> {
    const { crowdsec } = this.options;
    if (!crowdsec.hasMachine()) throw ipErrors.noMachine();
    if (!crowdsec.hasBouncer()) throw ipErrors.noBouncer();
    const deleted = await upstream(() => crowdsec.deleteDecisions(ip));
    const remaining = await this.decisions(ip);
    return { ip, deleted, still_blocked: remaining.length > 0, effective_within_s: this.options.effectiveWithinS() };
  }

  /** Alerts on the IP, or `[]` with the reason added to `warnings` (no machine credentials, LAPI failure). */
  private async alerts(ip: string, warnings: string[]): Promise<AlertView[]> {
    const { crowdsec } = this.options;
    if (!crowdsec.hasMachine()) {
      warnings.push(NO_MACHINE_WARNING);
      return [];
    }
    try {
      return (await crowdsec.alerts(ip, this.options.alertsLimit)).map(toAlert);
    } catch (err) {
      if (!(err instanceof CrowdSecError)) throw err;
      warnings.push(`alerts not read: ${err.message}`);
      return [];
    }
  }

  private async decisions(ip: string): Promise<DecisionView[]> {
    if (!this.options.crowdsec.hasBouncer()) throw ipErrors.noBouncer();
    const now = this.options.now().getTime();
    const decisions = await upstream(() => this.options.crowdsec.decisions(ip));
    return decisions.map((d) => toDecision(d, now));
  }
}

/** Runs a LAPI call, turning its failures into 502 `upstream_unavailable`. */
function toDecision(d: LapiDecision, now: number): DecisionView {
  return {
    id: d.id,
    type: String(d.type ?? ''),
    scope: String(d.scope ?? ''),
    value: String(d.value ?? ''),
    origin: String(d.origin ?? ''),
    scenario: String(d.scenario ?? ''),
    duration: String(d.duration ?? ''),
    until: expiresAt(d, now),
  };
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

function toAlert(a: LapiAlert): AlertView {
  const created = text(a.created_at);
  const createdMs = created ? Date.parse(created) : Number.NaN;
  return {
    id: a.id,
    scenario: a.scenario ?? '',
    message: a.message ?? '',
    created_at: Number.isFinite(createdMs) ? new Date(createdMs).toISOString() : null,
    events_count: Number.isInteger(a.events_count) ? (a.events_count as number) : 0,
    source: {
      ip: text(a.source?.ip),
      range: text(a.source?.range),
      cn: text(a.source?.cn),
      as_name: text(a.source?.as_name),
    },
  };
}
