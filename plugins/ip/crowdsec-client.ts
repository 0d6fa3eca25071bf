/**
 * CrowdSec Local API over HTTP (API.md §4.12): decisions with the bouncer key, alerts and deletes
 * with the machine JWT. Failures throw `CrowdSecError` with a message that names CrowdSec and the
 * credential involved, never its value.
 */

export interface CrowdSecSettings {
  url: string;
  bouncerKey: string;
  machineId: string;
  machinePassword: string;
  timeoutMs: number;
  /** `stack-manager/<version>`: LAPI rejects a machine login whose User-Agent lacks exactly one `/`. */
  userAgent: string;
  now: () => Date;
}

/** A LAPI failure, already fit for an API message. */
export class CrowdSecError extends Error {}

/** Decision as LAPI sends it. */
export interface LapiDecision {
  id: number;
  type: string;
  scope: string;
  value: string;
  origin: string;
  scenario: string;
  duration: string;
  /** Only in alert answers; the bouncer endpoints leave simulated decisions out. */
  simulated?: boolean;
}

/** What `GET /v1/decisions/stream` answers (`null` lists when there is nothing). */
export interface LapiStream {
  new: LapiDecision[];
  deleted: LapiDecision[];
}

/** A manual decision, sent as `cscli decisions add` sends it (an alert carrying one decision). */
export interface ManualDecision {
  value: string;
  scope: 'Ip' | 'Range';
  type: string;
  /** Go duration, e.g. `4h`. */
  duration: string;
  /** Becomes the alert's scenario and message and the decision's scenario (cscli's `--reason`). */
  reason: string;
}

/** Origin of the decisions we add: cscli's, so LAPI, console and bouncers treat them as manual ones. */
export const MANUAL_ORIGIN = 'cscli';

/** Alert as LAPI sends it (only the fields we use). */
export interface LapiAlert {
  id: number;
  scenario?: string;
  message?: string;
  created_at?: string;
  events_count?: number;
  source?: { ip?: string; range?: string; cn?: string; as_name?: string };
}

/** The JWT is renewed this long before LAPI's `expire`. */
const RENEW_BEFORE_MS = 60_000;

type Auth = 'none' | 'bouncer' | 'machine';

export class CrowdSecClient {
  private token: { value: string; renewAt: number } | null = null;
  private login: Promise<string> | null = null;

  constructor(private readonly settings: CrowdSecSettings) {}

  hasBouncer(): boolean {
    return this.settings.url !== '' && this.settings.bouncerKey !== '';
  }

  hasMachine(): boolean {
    return this.settings.url !== '' && this.settings.machineId !== '' && this.settings.machinePassword !== '';
  }

  /** LAPI liveness: `GET /health` answers 200. */
  async health(signal?: AbortSignal): Promise<void> {
    await this.call('GET', '/health', 'none', signal);
  }

  /** Decisions that apply to `ip`, range decisions containing it included (`null` → `[]`). */
  async decisions(ip: string): Promise<LapiDecision[]> {
    const body = await this.call('GET', `/v1/decisions?ip=${encodeURIComponent(ip)}`, 'bouncer');
    return Array.isArray(body) ? (body as LapiDecision[]) : [];
  }

  /** The newest `limit` alerts whose source is `ip`. */
  async alerts(ip: string, limit: number): Promise<LapiAlert[]> {
    const body = await this.call('GET', `/v1/alerts?ip=${encodeURIComponent(ip)}&limit=${limit}`, 'machine');
    return Array.isArray(body) ? (body as LapiAlert[]) : [];
  }

  /**
   * Deletes the decisions on `ip` itself; `contains=false` keeps range decisions that merely contain
   * it (LAPI's default would lift a whole /24 ban to unban one address). Returns `nbDeleted`.
   */
  async deleteDecisions(ip: string): Promise<number> {
    const body = await this.call('DELETE', `/v1/decisions?ip=${encodeURIComponent(ip)}&contains=false`, 'machine');
    return this.nbDeleted(body, 'DELETE /v1/decisions');
  }

  /**
   * Active decisions (bouncer key): all, or LAPI's filters — `scope` (`ip`, `range`), `value`,
   * `type`, and `ip`/`range` with `contains: 'false'` for the decisions inside that address or range.
   */
  async listDecisions(
    filter: { scope?: string; value?: string; type?: string; ip?: string; range?: string; contains?: 'false' } = {},
  ): Promise<LapiDecision[]> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(filter)) if (value) query.set(key, value);
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    const body = await this.call('GET', `/v1/decisions${suffix}`, 'bouncer');
    return Array.isArray(body) ? (body as LapiDecision[]) : [];
  }

  /**
   * The decisions stream of our bouncer key: every active decision with `startup`, otherwise those
   * created or deleted since our previous pull (LAPI keeps that point per bouncer).
   */
  async stream(startup: boolean): Promise<LapiStream> {
    const body = (await this.call(
      'GET',
      `/v1/decisions/stream?startup=${startup}&scopes=ip,range`,
      'bouncer',
    )) as Partial<LapiStream> | null;
    return {
      new: Array.isArray(body?.new) ? body.new : [],
      deleted: Array.isArray(body?.deleted) ? body.deleted : [],
    };
  }

  /**
   * Adds a decision as `cscli decisions add` does: `POST /v1/alerts` with one alert whose fields are
   * cscli's (capacity 0, one event, leakspeed "0", remediation true), then reads the alert back
   * (`GET /v1/alerts/:id`) for the decisions LAPI created, with their ids.
   */
  async addDecision(decision: ManualDecision): Promise<LapiDecision[]> {
    const now = this.settings
      .now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
    const { value, scope, type, duration, reason } = decision;
    const alert = {
      capacity: 0,
      decisions: [{ duration, scope, value, type, scenario: reason, origin: MANUAL_ORIGIN }],
      events: [],
      events_count: 1,
      leakspeed: '0',
      message: reason,
      scenario: reason,
      scenario_hash: '',
      scenario_version: '',
      simulated: false,
      source: { as_name: '', as_number: '', cn: '', ip: value, range: '', scope, value },
      start_at: now,
      stop_at: now,
      created_at: now,
      remediation: true,
    };
    const ids = await this.call('POST', '/v1/alerts', 'machine', undefined, JSON.stringify([alert]));
    const id = Array.isArray(ids) ? String(ids[0] ?? '') : '';
    if (!/^[0-9]+$/.test(id)) throw new CrowdSecError('CrowdSec LAPI answered POST /v1/alerts without an alert id');
    const created = (await this.call('GET', `/v1/alerts/${id}`, 'machine')) as { decisions?: unknown } | null;
    return Array.isArray(created?.decisions) ? (created.decisions as LapiDecision[]) : [];
  }

  /** Deletes one decision by id (machine JWT); LAPI answers 500 for an id it does not know. */
  async deleteDecision(id: number): Promise<number> {
    return this.nbDeleted(await this.call('DELETE', `/v1/decisions/${id}`, 'machine'), 'DELETE /v1/decisions/:id');
  }

  /** Whether the LAPI has allowlists (CrowdSec ≥ 1.6.8 answers `GET /v1/allowlists`; older ones 404). */
  async hasAllowlists(): Promise<boolean> {
    const response = await this.send('GET', '/v1/allowlists', await this.headers('machine'));
    await response.body?.cancel();
    return response.status === 200;
  }

  private nbDeleted(body: unknown, where: string): number {
    const deleted = Number.parseInt(String((body as { nbDeleted?: unknown } | null)?.nbDeleted ?? '0'), 10);
    if (!Number.isFinite(deleted))
      throw new CrowdSecError(`CrowdSec LAPI answered ${where} with an unusable nbDeleted`);
    return deleted;
  }

  /** One request; with the machine JWT a 401 drops the cached token and retries once after a new login. */
  private async call(method: string, path: string, auth: Auth, signal?: AbortSignal, body?: string): Promise<unknown> {
    let response = await this.send(method, path, await this.headers(auth, body), signal, body);
    if (response.status === 401 && auth === 'machine') {
      await response.body?.cancel();
      this.token = null;
      response = await this.send(method, path, await this.headers(auth, body), signal, body);
    }
    if (response.status === 403 && auth === 'bouncer') {
      await response.body?.cancel();
      throw new CrowdSecError('CrowdSec LAPI rejected the bouncer key (403): check crowdsec.bouncer_key');
    }
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      throw new CrowdSecError(
        `CrowdSec LAPI rejected the machine token on ${method} ${path.split('?')[0]} (${response.status})`,
      );
    }
    return this.json(response, method, path);
  }

  private async headers(auth: Auth, body?: string): Promise<Record<string, string>> {
    const headers: Record<string, string> = { 'user-agent': this.settings.userAgent, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (auth === 'bouncer') headers['x-api-key'] = this.settings.bouncerKey;
    if (auth === 'machine') headers.authorization = `Bearer ${await this.jwt()}`;
    return headers;
  }

  /** The cached JWT, or a new one; concurrent callers share one login. */
  private async jwt(): Promise<string> {
    if (this.token && this.settings.now().getTime() < this.token.renewAt) return this.token.value;
    this.login ??= this.loginOnce().finally(() => {
      this.login = null;
    });
    return this.login;
  }

  private async loginOnce(): Promise<string> {
    const body = JSON.stringify({ machine_id: this.settings.machineId, password: this.settings.machinePassword });
    const response = await this.send(
      'POST',
      '/v1/watchers/login',
      { 'user-agent': this.settings.userAgent, 'content-type': 'application/json' },
      undefined,
      body,
    );
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      throw new CrowdSecError(
        `CrowdSec LAPI rejected the machine login of ${this.settings.machineId} (${response.status}): check crowdsec.machine_id and crowdsec.machine_password`,
      );
    }
    const answer = (await this.json(response, 'POST', '/v1/watchers/login')) as {
      token?: unknown;
      expire?: unknown;
    } | null;
    if (typeof answer?.token !== 'string' || answer.token === '')
      throw new CrowdSecError('CrowdSec LAPI login answered without a token');
    const expire = typeof answer.expire === 'string' ? Date.parse(answer.expire) : Number.NaN;
    // without a usable expiry the token is used for this call only
    const renewAt = Number.isFinite(expire) ? expire - RENEW_BEFORE_MS : 0;
    this.token = { value: answer.token, renewAt };
    return answer.token;
  }

  private async json(response: Response, method: string, path: string): Promise<unknown> {
    const where = `${method} ${path.split('?')[0]}`;
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel();
      throw new CrowdSecError(`CrowdSec LAPI answered ${response.status} to ${where}`);
    }
    const text = await response.text();
    try {
      return text.trim() === '' ? null : JSON.parse(text);
    } catch {
      throw new CrowdSecError(`CrowdSec LAPI answered ${where} with invalid JSON`);
    }
  }

  private async send(
    method: string,
    path: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
    body?: string,
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      return await fetch(this.base() + path, {
        method,
        headers,
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      const where = `CrowdSec LAPI at ${this.origin()}`;
      if ((err as Error).name === 'TimeoutError')
        throw new CrowdSecError(
          `${where} did not answer ${method} ${path.split('?')[0]} within ${this.settings.timeoutMs} ms`,
        );
      if ((err as Error).name === 'AbortError') throw new CrowdSecError(`${where}: request aborted`);
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CrowdSecError(`${where} is unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
  }

  private base(): string {
    return this.settings.url.replace(/\/+$/, '');
  }

  /** The LAPI address for messages: scheme, host and port only (never userinfo). */
  private origin(): string {
    try {
      return new URL(this.settings.url).origin;
    } catch {
      return 'the configured crowdsec.url';
    }
  }
}
