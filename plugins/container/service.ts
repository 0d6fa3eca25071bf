/** The Containers domain (API.md §4.11): stack listing, start/stop/restart, image update checks. */
import type Docker from 'dockerode';
import type { FastifyBaseLogger } from 'fastify';
import { DOCKER_CALL_TIMEOUT_MS, dockerMessage, isDockerHttpError, type DockerClient } from './docker-client.ts';
import { currentDigest } from './digests.ts';
import { containerErrors } from './errors.ts';
import { RegistryDigestCache } from './registry-cache.ts';
import { ImageUpdateNotices } from './update-notices.ts';
import type { ActionResultView, ContainerAction, ContainerView, ImageUpdateView } from './schemas.ts';
import { plainName, type StackMembership } from './stack.ts';
import { containerView, missingView, nameOf } from './views.ts';

export interface ContainerServiceOptions {
  docker: DockerClient;
  stack: StackMembership;
  /** `containers.stop_timeout_s`: how long stop and restart wait before Docker kills. */
  stopTimeoutS: number;
  /** `containers.updates_ttl_s`: registry answers are cached this long per reference. */
  updatesTtlS: number;
  now: () => Date;
  log: FastifyBaseLogger;
  /** Hears of each start/stop/restart done through act(), with the state Docker reports after it: the `container` event. */
  notify?: (change: { name: string; state: string }) => void;
  /** Hears of each image update found by a check, once per service and new registry digest: the `image_update` event. */
  onUpdateAvailable?: (update: ImageUpdateView) => void;
  /** What was told already, across restarts and leader changes (update-notices.ts); default: kept in memory only. */
  notices?: ImageUpdateNotices;
  /**
   * Whether this node tells updates (default: always). In cluster mode only the leader does: the record
   * is shared, and a node that does not lead would mark as told what it cannot notify (notifications
   * go out from the leader only).
   */
  tells?: () => boolean;
  /** Throws 409 `busy` when an update job holds the container. */
  assertFree?: (name: string) => void;
}

const STOPPED = new Set(['created', 'exited', 'dead']);

/** A 404 from Docker as null; every other failure goes on. */
async function orNull<T>(work: Promise<T>): Promise<T | null> {
  try {
    return await work;
  } catch (err) {
    if (isDockerHttpError(err) && err.statusCode === 404) return null;
    throw err;
  }
}

export class ContainerService {
  private readonly registry: RegistryDigestCache;
  /** The registry digest last announced as an update, per service: a later check of it is no news. */
  private readonly notices: ImageUpdateNotices;

  constructor(private readonly options: ContainerServiceOptions) {
    this.notices = options.notices ?? new ImageUpdateNotices(null);
    this.registry = new RegistryDigestCache(
      (reference) => this.lookupLatest(reference),
      options.updatesTtlS * 1000,
      options.now,
    );
  }

  private get engine(): Docker {
    return this.options.docker.engine;
  }

  /** Stack containers (or every container with `all`) plus `missing` entries, sorted by name. */
  async list(all: boolean, withLabels: boolean): Promise<ContainerView[]> {
    const { stack } = this.options;
    const summaries = await this.listAll();
    const chosen = all ? summaries : summaries.filter((s) => stack.includes(nameOf(s), s.Labels));
    const views = await Promise.all(
      chosen.map(async (summary) => {
        const inspect = await this.inspect(summary.Id);
        // removed between the list and the inspect: no longer there
        return inspect
          ? containerView(summary, inspect, stack.includes(nameOf(summary), summary.Labels), withLabels)
          : null;
      }),
    );
    const present = new Set(summaries.map(nameOf));
    const missing = stack
      .expectedNames()
      .filter((name) => !present.has(name))
      .map((name) => missingView(name, withLabels));
    return [...views.filter((v): v is ContainerView => v !== null), ...missing].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  }

  /**
   * start, stop or restart one stack container; idempotent (start of a running one, stop of a
   * stopped one change nothing). Answers the state Docker reports afterwards.
   */
  async act(action: ContainerAction, containerName: string): Promise<ActionResultView> {
    const { docker, stack, stopTimeoutS } = this.options;
    const requested = plainName(containerName);
    const before = await this.inspect(requested);
    if (!before) throw containerErrors.notFound(requested);
    const name = plainName(before.Name);
    if (!stack.includes(name, before.Config.Labels)) throw containerErrors.outsideStack(name);
    this.options.assertFree?.(name);

    const container = this.engine.getContainer(before.Id);
    const waitMs = stopTimeoutS * 1000 + DOCKER_CALL_TIMEOUT_MS;
    try {
      if (action === 'start' && before.State.Status !== 'running') {
        await docker.call(`start ${name}`, (abortSignal) => container.start({ abortSignal }));
      } else if (action === 'stop' && !STOPPED.has(before.State.Status)) {
        await docker.call(`stop ${name}`, (abortSignal) => container.stop({ t: stopTimeoutS, abortSignal }), waitMs);
      } else if (action === 'restart') {
        await docker.call(
          `restart ${name}`,
          (abortSignal) => container.restart({ t: stopTimeoutS, abortSignal }),
          waitMs,
        );
      }
    } catch (err) {
      if (!isDockerHttpError(err)) throw err;
      // 304: it already was in the asked state (a race with another caller): still a success
      if (err.statusCode === 404) throw containerErrors.notFound(name);
      if (err.statusCode !== 304) throw containerErrors.refused(name, action, dockerMessage(err));
    }
    const after = await this.inspect(before.Id);
    if (!after) throw containerErrors.notFound(name);
    this.options.log.info({ container: name, action, state: after.State.Status }, 'container action');
    this.options.notify?.({ name, state: after.State.Status });
    return { name, action, state: after.State.Status };
  }

  /** One ImageUpdate per existing stack container, sorted by name; `refresh` bypasses the registry cache. */
  async updates(refresh: boolean): Promise<ImageUpdateView[]> {
    const { stack } = this.options;
    const summaries = (await this.listAll()).filter((s) => stack.includes(nameOf(s), s.Labels));
    const results = await Promise.all(
      summaries.map(async (summary) => {
        const inspect = await this.inspect(summary.Id);
        return inspect ? this.updateOf(nameOf(summary), inspect.Config.Image, inspect.Image, refresh) : null;
      }),
    );
    const found = results
      .filter((r): r is ImageUpdateView => r !== null)
      .sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0));
    if (!(this.options.tells?.() ?? true)) return found;
    // another node may have led (and told) since this one last did: its record counts too
    await this.notices.reload();
    let changed = false;
    for (const update of found) changed = this.announce(update) || changed;
    if (changed)
      await this.notices
        .save()
        .catch((err: Error) =>
          this.options.log.warn(
            { error: err.message },
            'image update notices not saved; a restart or another leader may repeat them',
          ),
        );
    return found;
  }

  /** Tells of an available update once per service and latest digest; true when the record changed. */
  private announce(update: ImageUpdateView): boolean {
    if (update.update_available !== true || update.latest_digest === null) {
      // up to date again (updated, or the registry went back): a later new digest is news again
      return update.update_available === false && this.notices.set(update.service, null);
    }
    if (!this.notices.set(update.service, update.latest_digest)) return false;
    this.options.onUpdateAvailable?.(update);
    return true;
  }

  /** `imageId` is what the container runs: the tag may point at a newer pull (a rolled-back update), which it does not run. */
  private async updateOf(
    service: string,
    reference: string,
    imageId: string,
    refresh: boolean,
  ): Promise<ImageUpdateView> {
    const image = await orNull(
      this.options.docker.call(`inspect image ${reference}`, () => this.engine.getImage(imageId).inspect()),
    );
    const current = currentDigest(reference, image?.RepoDigests);
    const registry = await this.registry.get(reference, refresh);
    const problems: string[] = [];
    if (!image) problems.push(`image ${reference} is not present locally`);
    else if (!current) problems.push('the local image has no registry digest (built or imported locally)');
    if (registry.error) problems.push(registry.error);
    return {
      service,
      image: reference,
      current_digest: current,
      latest_digest: registry.latest_digest,
      update_available: current && registry.latest_digest ? current !== registry.latest_digest : null,
      checked_at: registry.checked_at,
      error: problems.length > 0 ? problems.join('; ') : null,
    };
  }

  /** The registry digest of a reference through Docker's distribution endpoint (no pull). */
  private async lookupLatest(reference: string): Promise<{ digest: string } | { error: string }> {
    try {
      const answer = await this.options.docker.distribution(reference);
      const digest = answer.Descriptor?.digest;
      return digest ? { digest } : { error: `registry: no digest for ${reference}` };
    } catch (err) {
      if (isDockerHttpError(err)) return { error: `registry: ${dockerMessage(err)}` };
      throw err;
    }
  }

  private listAll(): Promise<Docker.ContainerInfo[]> {
    return this.options.docker.call('list containers', (abortSignal) =>
      this.engine.listContainers({ all: true, abortSignal }),
    );
  }

  /** Inspect by id or name; null when Docker has no such container. */
  private inspect(idOrName: string): Promise<Docker.ContainerInspectInfo | null> {
    return orNull(
      this.options.docker.call(`inspect ${idOrName}`, (abortSignal) =>
        this.engine.getContainer(idOrName).inspect({ abortSignal }),
      ),
    );
  }
}
