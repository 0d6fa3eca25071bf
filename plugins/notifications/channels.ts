/**
 * Notification channels (API.md §4.21): CRUD over the `notifications` collection (one YAML file per
 * channel, mode 0600), per-type config validation, defaults, and views with secrets masked.
 */
import type { Collection, StoredObject } from '../../core/store/types.ts';
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import { explainSchema } from '../../core/errors/explain.ts';
import { checkName, uniqueSlug } from '../../model/ids.ts';
import { notificationErrors } from './errors.ts';
import { maskConfig, restoreSecrets } from './secrets.ts';
import { CATEGORIES, CONFIG_SCHEMAS, type ChannelData, type ChannelView, type ChannelWriteBody } from './schemas.ts';

export const DEFAULT_MAX_PER_MINUTE = 30;

/** A channel file as read (defaulted fields may be absent). */
export type ChannelFileData = Partial<ChannelData> & Pick<ChannelData, 'name' | 'type' | 'config'>;

/** Fills the defaults of API.md §4.21. */
export function withDefaults(data: ChannelFileData): ChannelData {
  return {
    name: data.name,
    type: data.type,
    enabled: data.enabled ?? true,
    categories: data.categories ?? [...CATEGORIES],
    min_severity: data.min_severity ?? 'warning',
    schedule: data.schedule ?? 'immediate',
    quiet_hours: data.quiet_hours ?? null,
    max_per_minute: data.max_per_minute ?? DEFAULT_MAX_PER_MINUTE,
    config: data.config,
  };
}

/** Problems of a channel beyond its base schema: the config of its type, the quiet hours' time zone. */
export function checkChannel(data: Pick<ChannelData, 'type' | 'config' | 'quiet_hours'>): ErrorDetail[] {
  const details = explainSchema(CONFIG_SCHEMAS[data.type], data.config).map((detail) => ({
    path: `/config${detail.path}`,
    message: detail.message,
  }));
  const zone = data.quiet_hours?.timezone;
  if (zone !== undefined && !validZone(zone))
    details.push({ path: '/quiet_hours/timezone', message: `is not a time zone this server knows: "${zone}"` });
  return details;
}

export function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function toView(object: StoredObject<ChannelData>): ChannelView {
  const data = withDefaults(object.data);
  return {
    id: object.id,
    ...data,
    config: maskConfig(data.type, data.config),
    etag: object.etag,
    created_at: object.created_at,
    updated_at: object.updated_at,
  };
}

export class ChannelService {
  constructor(private readonly collection: Collection<ChannelData>) {}

  list(): ChannelView[] {
    return this.collection.list().map(toView);
  }

  get(id: string): ChannelView {
    return toView(this.stored(id));
  }

  /** The stored object with its secrets, defaults filled (senders and the delivery queue read it). */
  channel(id: string): (ChannelData & { id: string }) | undefined {
    const object = this.collection.get(id);
    return object ? { id, ...withDefaults(object.data) } : undefined;
  }

  channels(): (ChannelData & { id: string })[] {
    return this.collection.list().map((object) => ({ id: object.id, ...withDefaults(object.data) }));
  }

  etag(id: string): string {
    return this.stored(id).etag;
  }

  async create(body: ChannelWriteBody): Promise<ChannelView> {
    const data = this.prepare(body, undefined);
    this.checkNameFree(data.name, undefined);
    if (body.id !== undefined && this.collection.has(body.id)) throw notificationErrors.idTaken(body.id);
    const id = body.id ?? uniqueSlug(data.name, 'channel', (candidate) => this.collection.has(candidate));
    return toView(await this.collection.create(id, data));
  }

  async put(id: string, body: ChannelWriteBody, expect?: (etag: string | undefined) => boolean): Promise<ChannelView> {
    const current = this.stored(id);
    if (body.id !== undefined && body.id !== id)
      throw notificationErrors.invalid([{ path: '/id', message: `must equal the path id ${id} (ids are immutable)` }]);
    const data = this.prepare(body, withDefaults(current.data));
    this.checkNameFree(data.name, id);
    return toView(await this.collection.put(id, data, { expect }));
  }

  async remove(id: string, expect?: (etag: string | undefined) => boolean): Promise<void> {
    this.stored(id);
    if (!(await this.collection.delete(id, { expect }))) throw notificationErrors.notFound(id);
  }

  private stored(id: string): StoredObject<ChannelData> {
    const object = this.collection.get(id);
    if (!object) throw notificationErrors.notFound(id);
    return object;
  }

  /** Validated, defaulted data to store; masks replaced by the stored secrets. */
  private prepare(body: ChannelWriteBody, stored: ChannelData | undefined): ChannelData {
    const name = checkName(body.name);
    const { config, unknownMasks } = restoreSecrets(body.type, body.config, stored);
    if (unknownMasks.length > 0) throw notificationErrors.maskWithoutSecret(unknownMasks);
    const data = withDefaults({ ...body, name, config } as ChannelFileData);
    const details = checkChannel(data);
    if (details.length > 0) throw notificationErrors.invalid(details);
    return data;
  }

  private checkNameFree(name: string, self: string | undefined): void {
    const lower = name.toLowerCase();
    const other = this.collection.list().find((o) => o.id !== self && o.data.name.toLowerCase() === lower);
    if (other) throw notificationErrors.nameTaken(name, other.id);
  }
}
