/**
 * POST /api/static/apply (API.md §4.20): a job that makes the edited static config and compose file
 * take effect — Traefik restarted (it reads its bind-mounted static config only at start), Gerbil
 * recreated with the compose file's published ports through the update machinery (rename, create,
 * start, health wait, cleanup; rollback on failure), then a bounded wait until every `traefik` data
 * source's API lists each entry point of the static config.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { PlannedUnit, StackJobs, StackJobTools } from '../container/index.ts';
import { fetchTraefikList, type UpstreamSource } from '../datasource/index.ts';
import type { JobView, PlannedStep } from '../jobs/index.ts';
import { validationError } from '../../core/errors/app-error.ts';
import { DotEnvError, readComposeVariables } from './compose-env.ts';
import { staticErrors } from './errors.ts';
import { PortItemError, portBindings, sameBindings, withBindings, type PortBindings } from './gerbil-ports.ts';
import type { StaticService } from './service.ts';

export const APPLY_JOB_KIND = 'static_apply';
/** The services apply knows, in the order it handles them; also their stack container names (§4.11). */
export const APPLY_SERVICES = ['traefik', 'gerbil'] as const;
export type ApplyService = (typeof APPLY_SERVICES)[number];

const TRAEFIK = 'traefik';
const GERBIL = 'gerbil';
const ENTRY_POINTS_POLL_MS = 500;

export interface ApplyRequest {
  services?: ApplyService[];
  health_timeout_s?: number;
}

export interface ApplyOptions {
  jobs: StackJobs;
  entries: Pick<StaticService, 'entryPointNames' | 'gerbilPortItems'>;
  staticPath: () => string | null;
  composePath: () => string | null;
  /** the `traefik`-type data sources (each one Traefik API), with credentials */
  traefikSources: () => Array<{ name: string; source: UpstreamSource }>;
  log: FastifyBaseLogger;
}

interface Plan {
  services: ApplyService[];
  /** Traefik's container: named traefik, or labelled com.docker.compose.service=traefik; null when none */
  traefik: string | null;
  /** Traefik restarted on its own (it does not live in Gerbil's network namespace, or Gerbil is not applied) */
  restartTraefik: boolean;
  gerbil: { unit: PlannedUnit; bindings: PortBindings; file: string } | null;
  /** the static config's entry points, waited for when Traefik was (re)started; null: no wait */
  entryPoints: string[] | null;
}

export class StaticApply {
  constructor(private readonly options: ApplyOptions) {}

  /** Checks settings, files and containers (503, 409, 422 before anything starts), then starts the job (202). */
  async start(request: ApplyRequest): Promise<JobView> {
    const { jobs } = this.options;
    const wanted = new Set(request.services ?? APPLY_SERVICES);
    const services = APPLY_SERVICES.filter((s) => wanted.has(s));
    const healthTimeoutS = request.health_timeout_s ?? 120;
    if (!(await jobs.configured())) throw staticErrors.noDocker();
    if (services.includes(TRAEFIK) && !this.options.staticPath()) throw staticErrors.noStaticPath();
    if (services.includes(GERBIL) && !this.options.composePath()) throw staticErrors.noComposeFile();

    const ports = services.includes(GERBIL) ? await this.gerbilBindings() : null;
    // each service's container (by name, else by compose service label); 422 naming each one missing
    const matches = await jobs.matchServices([...APPLY_SERVICES]);
    const containerOf = (service: ApplyService) => {
      const match = matches.get(service);
      return match && 'name' in match ? match.name : null;
    };
    const details = services.flatMap((service, index) => {
      const match = matches.get(service);
      return match && 'problem' in match ? [{ path: `/services/${index}`, message: match.problem }] : [];
    });
    if (details.length > 0) throw validationError(details);
    const traefik = containerOf(TRAEFIK);
    // a unit alone has all its namespace dependants
    const units = await jobs.plan(services.map((service) => containerOf(service)!));
    const gerbilUnit = ports ? (await jobs.plan([containerOf(GERBIL)!]))[0] : null;
    // Pangolin's stack runs Traefik in Gerbil's network namespace: recreating Gerbil recreates it
    const traefikFollowsGerbil = traefik !== null && (gerbilUnit?.dependants.includes(traefik) ?? false);
    const restartTraefik = services.includes(TRAEFIK) && !traefikFollowsGerbil;
    const traefikStarts = restartTraefik || traefikFollowsGerbil;
    const plan: Plan = {
      services,
      traefik,
      restartTraefik,
      gerbil: gerbilUnit && ports ? { unit: gerbilUnit, ...ports } : null,
      entryPoints: traefikStarts && this.options.staticPath() ? await this.options.entries.entryPointNames() : null,
    };

    const steps: PlannedStep[] = [];
    if (plan.restartTraefik) steps.push(...jobs.restartSteps(traefik!));
    if (plan.gerbil) steps.push(...jobs.recreateSteps(plan.gerbil.unit));
    if (plan.entryPoints) steps.push({ service: traefik ?? TRAEFIK, step: 'entrypoints' });
    const members = [
      ...new Set([...units, ...(gerbilUnit ? [gerbilUnit] : [])].flatMap((u) => [u.name, ...u.dependants])),
    ];
    const params = {
      services,
      health_timeout_s: healthTimeoutS,
      ...(plan.gerbil ? { compose_file: plan.gerbil.file } : {}),
    };
    return jobs.start({ kind: APPLY_JOB_KIND, params, steps, members, healthTimeoutS }, (tools) =>
      this.run(tools, plan, healthTimeoutS),
    );
  }

  /**
   * Gerbil's `ports:` as Docker bindings, `${VAR}`s from the `.env` beside the compose file; an item
   * that cannot be published → 409 naming it, an unreadable or malformed `.env` → 409 naming its line.
   */
  private async gerbilBindings(): Promise<{ bindings: PortBindings; file: string }> {
    const { file, items } = await this.options.entries.gerbilPortItems();
    try {
      return { bindings: portBindings(items, await readComposeVariables(file)), file };
    } catch (err) {
      if (err instanceof PortItemError) throw staticErrors.badPortItem(file, err.index, err.message);
      if (err instanceof DotEnvError)
        throw staticErrors.fileUnusable('compose .env file', err.file, err.line, err.message);
      throw err;
    }
  }

  private async run(tools: StackJobTools, plan: Plan, healthTimeoutS: number): Promise<void> {
    const { ctx } = tools;
    ctx.log.info({ services: plan.services, restart_traefik: plan.restartTraefik }, 'static config apply started');
    if (plan.restartTraefik) await tools.restart(plan.traefik!);
    if (plan.gerbil) {
      const { unit, bindings } = plan.gerbil;
      const old = await tools.inspect(unit.name);
      if (old && sameBindings(old.HostConfig.PortBindings as PortBindings | undefined, bindings)) {
        const reason = 'skipped: gerbil already publishes the ports of the compose file, nothing to recreate';
        for (const step of this.options.jobs.recreateSteps(unit)) ctx.step(step.service, step.step).skip(reason);
      } else {
        await tools.recreate(unit, (create, previous) => withBindings(create, previous, bindings));
      }
    }
    if (plan.entryPoints)
      await this.waitForEntryPoints(tools, plan.traefik ?? TRAEFIK, plan.entryPoints, healthTimeoutS);
  }

  /** Polls each `traefik` data source's /api/entrypoints until it lists every entry point (bounded). */
  private async waitForEntryPoints(
    tools: StackJobTools,
    container: string,
    expected: string[],
    timeoutS: number,
  ): Promise<void> {
    const { ctx } = tools;
    const step = ctx.step(container, 'entrypoints');
    const sources = this.options.traefikSources();
    if (sources.length === 0) {
      step.skip('skipped: no data source of type traefik, so Traefik API cannot be asked for its entry points');
      return;
    }
    step.begin(
      `waiting up to ${timeoutS} s until Traefik's API (${sources.map((s) => s.name).join(', ')}) lists the static config's entry points ${expected.join(', ')}`,
    );
    const deadline = Date.now() + timeoutS * 1000;
    const pending = new Map(sources.map((s) => [s.name, s.source]));
    const seen = new Map<string, string>();
    let said = '';
    for (;;) {
      for (const [name, source] of pending) {
        const answer = await fetchTraefikList(source, '/api/entrypoints', { signal: ctx.signal });
        if (!answer.ok) {
          seen.set(name, `not answering: ${answer.error}`);
          continue;
        }
        const listed = new Set(answer.items.map((item) => item.name).filter((n) => typeof n === 'string'));
        const missing = expected.filter((n) => !listed.has(n));
        if (missing.length === 0) pending.delete(name);
        else seen.set(name, `lists ${[...listed].join(', ') || 'none'}; missing ${missing.join(', ')}`);
      }
      if (pending.size === 0) {
        step.ok(
          `Traefik's API (${sources.map((s) => s.name).join(', ')}) lists all ${expected.length} entry points of the static config`,
        );
        return;
      }
      const state = [...pending.keys()].map((name) => `${name} ${seen.get(name)}`).join('; ');
      if (ctx.signal.aborted || Date.now() >= deadline) {
        const message = ctx.signal.aborted
          ? `interrupted while waiting for Traefik's entry points (${state})`
          : `Traefik did not list the static config's entry points within ${timeoutS} s (${state}); the containers run with the new settings: check Traefik's log for the entry point (port already in use, bad address)`;
        step.fail(message);
        throw new Error(`apply failed at entrypoints: ${message}`);
      }
      // one message (log line and job event) per change of what Traefik answers, not per poll
      if (state !== said) step.say(`waiting for Traefik's entry points: ${state}`);
      said = state;
      await sleep(ENTRY_POINTS_POLL_MS, undefined, { signal: ctx.signal }).catch(() => undefined);
    }
  }
}
