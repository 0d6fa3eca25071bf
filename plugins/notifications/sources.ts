/**
 * What raises a notification (API.md §4.21 categories and severities), from the events of the bus
 * (§4.17, §4.19): live status and findings, upstream reachability (reported once it has failed for
 * `notifications.upstream_down_after_s`, and its return), jobs, containers, backups, invalid hand
 * edits, config changes, certificate expiry, manual CrowdSec decisions and image updates. The
 * `system` sources that are no bus events (leader change, lock lost) are in `watchSystem`.
 */
import type { EventListener, EventType } from '../events/index.ts';
import type { Notification } from './delivery.ts';

export interface SourceOptions {
  listen: (listener: EventListener) => () => void;
  notify: (notification: Notification) => void;
  upstreamDownAfterMs: number;
  nowMs: () => number;
}

type Data = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : value == null ? '' : String(value));

/** Live states that mean "not serving what we emit" (unknown = instance unreachable: its own finding). */
const NOT_LIVE = new Set(['disabled', 'missing', 'outdated', 'warning']);
/** Config changes worth telling: by someone (API, hand edit, restore), not by discovery or another node. */
const CHANGE_SOURCES = new Set(['api', 'file', 'restore']);
/** Collections whose changes are not news: the channels themselves (the operator just made them). */
const QUIET_COLLECTIONS = new Set(['notifications']);

export function watchEvents(options: SourceOptions): { tick(nowMs: number): void; stop(): void } {
  const { notify } = options;
  /** Failing upstream sources: since when, and whether that was reported. */
  const down = new Map<string, { since: number; message: string; reported: boolean }>();
  /** Jobs already reported finished (a job event comes with every step change). */
  const finishedJobs = new Set<string>();

  const handlers: Partial<Record<EventType | 'certificate', (data: Data) => void>> = {
    live: (data) => {
      const [resource, state, previous] = [text(data.resource), text(data.state), text(data.previous)];
      if (previous === 'live' && NOT_LIVE.has(state))
        notify({
          category: 'proxy',
          severity: 'error',
          title: `Resource ${resource} is no longer live (${state})`,
          body: `Traefik does not run resource ${resource} as Stack Manager emits it: its state went from live to ${state}. GET /api/proxy-config/diagnosis tells why.`,
        });
      else if (state === 'live' && NOT_LIVE.has(previous))
        notify({
          category: 'proxy',
          severity: 'info',
          title: `Resource ${resource} is live again`,
          body: `Resource ${resource} went from ${previous} back to live.`,
        });
    },
    diagnosis: (data) => {
      const finding = (data.finding ?? {}) as Data;
      const severity = text(finding.severity);
      const raised = data.action === 'raised';
      notify({
        category: 'proxy',
        severity: !raised ? 'info' : severity === 'error' ? 'error' : severity === 'warning' ? 'warning' : 'info',
        title: `${raised ? '' : 'Cleared: '}${text(finding.kind).replace(/_/g, ' ')}`,
        body: raised
          ? `${text(finding.message)}${finding.fix ? `\nFix: ${text(finding.fix)}` : ''}`
          : `No longer found: ${text(finding.message)}`,
      });
    },
    upstream: (data) => {
      const source = text(data.source);
      if (data.state === 'failed') {
        const entry = down.get(source);
        if (entry) entry.message = text(data.message);
        else down.set(source, { since: options.nowMs(), message: text(data.message), reported: false });
        return;
      }
      const entry = down.get(source);
      down.delete(source);
      if (entry?.reported)
        notify({
          category: 'proxy',
          severity: 'info',
          title: `Data source ${source} is reachable again`,
          body: `The upstream ${source} answers again; discovery goes on.`,
        });
    },
    job: (data) => {
      const id = text(data.id);
      const status = text(data.status);
      if ((status !== 'succeeded' && status !== 'failed') || finishedJobs.has(id)) return;
      finishedJobs.add(id);
      if (finishedJobs.size > 1000) finishedJobs.delete(finishedJobs.values().next().value as string);
      const kind = text(data.kind).replace(/_/g, ' ');
      const steps = Array.isArray(data.steps) ? (data.steps as Data[]) : [];
      const rolledBack = steps.some((step) => step.step === 'rollback' && step.status === 'ok');
      notify(
        status === 'succeeded'
          ? {
              category: 'containers',
              severity: 'info',
              title: `Job ${kind} done`,
              body: `Job ${id} (${kind}) succeeded.`,
            }
          : {
              category: 'containers',
              severity: rolledBack ? 'warning' : 'error',
              title: rolledBack ? `Job ${kind} failed and was rolled back` : `Job ${kind} failed`,
              body: `Job ${id}: ${text(data.error) || 'failed'}`,
            },
      );
    },
    container: (data) => {
      const [name, state] = [text(data.name), text(data.state)];
      const bad = state === 'exited' || state === 'dead' || state === 'unhealthy';
      notify({
        category: 'containers',
        severity: bad ? 'error' : state === 'restarting' ? 'warning' : 'info',
        title: `Container ${name} is ${state}`,
        body: `The stack container ${name} is now ${state}.`,
      });
    },
    backup: (data) => {
      const [id, action] = [text(data.id), text(data.action)];
      if (action === 'failed')
        notify({
          category: 'backups',
          severity: 'error',
          title: `Backup failed (${id})`,
          body: `The ${id} backup failed: ${text(data.message) || 'see the server log'}`,
        });
      else if (action === 'created' || action === 'restored')
        notify({
          category: 'backups',
          severity: 'info',
          title: `Backup ${action}: ${id}`,
          body: `Backup ${id} ${action}.`,
        });
    },
    invalid_file: (data) => {
      const path = text(data.path);
      if (data.cleared === true)
        notify({ category: 'config', severity: 'info', title: `Fixed: ${path}`, body: `${path} is valid again.` });
      else
        notify({
          category: 'config',
          severity: 'warning',
          title: `Invalid hand edit: ${path}`,
          // a channel file's error may quote the value it refused (a token): not sent on to other channels
          body: `${path}${data.line != null ? ` line ${text(data.line)}` : ''}: ${path.startsWith('notifications/') ? 'see GET /api/proxy-config/status' : text(data.message)}\nThe previous valid version stays in effect.`,
        });
    },
    object: (data) => {
      const [collection, id, action, source] = [
        text(data.collection),
        text(data.id),
        text(data.action),
        text(data.source),
      ];
      if (!CHANGE_SOURCES.has(source) || QUIET_COLLECTIONS.has(collection)) return;
      const how = { api: 'through the API', file: 'by a hand edit', restore: 'by a backup restore' }[source];
      notify({
        category: 'config',
        severity: 'info',
        title: `${collection}${id ? `/${id}` : ''} ${action}`,
        body: `${collection}${id ? ` ${id}` : ''} was ${action} ${how}.`,
      });
    },
    decision: (data) => {
      const [action, value, type, by] = [text(data.action), text(data.value), text(data.type), text(data.by)];
      const titles: Record<string, [string, string]> = {
        added: [`Manual ${type}: ${value}`, `${by} added a ${type} on ${value} for ${text(data.duration)}.`],
        deleted: [`Decision removed: ${type} on ${value}`, `${by} deleted the ${type} decision on ${value}.`],
        unbanned: [`Unbanned: ${value}`, `${by} removed every decision on ${value} (unban).`],
      };
      const [title, body] = titles[action] ?? [`Decision ${action}: ${value}`, `${by}: ${action} ${value}.`];
      notify({ category: 'security', severity: 'info', title, body });
    },
    image_update: (data) => {
      const [service, image] = [text(data.service), text(data.image)];
      notify({
        category: 'containers',
        severity: 'info',
        title: `Image update available: ${service}`,
        body: `The registry has a newer ${image} for ${service}: ${text(data.latest_digest)} (running ${text(data.current_digest)}). POST /api/container/update applies it.`,
      });
    },
    certificate: (data) => {
      const threshold = Number(data.threshold);
      const days = Number(data.days_left);
      // days_left rounds down (plugins/metrics/cert-check.ts): 0 is "less than a day left", so
      // only a not_after already passed by the app's clock is an expiry
      const expired = Date.parse(text(data.not_after)) < options.nowMs();
      notify({
        category: 'certs',
        severity: threshold <= 3 ? 'error' : 'warning',
        title: expired
          ? `Certificate ${text(data.cn)} has expired`
          : days <= 0
            ? `Certificate ${text(data.cn)} expires within a day`
            : `Certificate ${text(data.cn)} expires in ${days} days`,
        body: `The certificate for ${text(data.cn)} (${text(data.source)}) is valid until ${text(data.not_after)}.`,
      });
    },
  };

  const stop = options.listen((type, data) => handlers[type as EventType]?.(data as Data));

  return {
    /** Reports sources that have been failing for longer than the setting. */
    tick(nowMs: number) {
      for (const [source, entry] of down) {
        if (entry.reported || nowMs - entry.since < options.upstreamDownAfterMs) continue;
        entry.reported = true;
        notify({
          category: 'proxy',
          severity: 'error',
          title: `Data source ${source} is unreachable`,
          body: `The upstream ${source} has failed for ${Math.round((nowMs - entry.since) / 1000)} s: ${entry.message}`,
        });
      }
    },
    stop,
  };
}

export interface SystemSourceOptions {
  /** `app.cluster.onLeadership`. */
  onLeadership: (listener: (leading: boolean) => void) => () => void;
  /** `app.dataDirLock.onLost`. */
  onLockLost: (listener: (err: Error) => void) => () => void;
  nodeName: string;
  notify: (notification: Notification) => void;
}

/** API.md §4.21 system: this node taking over as cluster leader (warning), the data dir lock lost (error). */
export function watchSystem(options: SystemSourceOptions): () => void {
  const { notify, nodeName } = options;
  // the node that takes over tells (notifications go out from the leader only; the one demoted may not reach etcd)
  const stopLeadership = options.onLeadership((leading) => {
    if (leading)
      notify({
        category: 'system',
        severity: 'warning',
        title: `Cluster leader change: ${nodeName} leads`,
        body: `Node ${nodeName} is now the cluster leader and runs the singleton work (discovery sync, backups, update jobs, notifications). The previous leader stopped, lost etcd or its lease.`,
      });
  });
  const stopLock = options.onLockLost((err) =>
    notify({
      category: 'system',
      severity: 'error',
      title: 'The data dir lock was lost',
      body: `The lock of the data dir was removed or could not be refreshed (${err.message}): another Stack Manager may start writing the same data dir. Restart this one once only one runs.`,
    }),
  );
  return () => {
    stopLeadership();
    stopLock();
  };
}
