/**
 * Template seeding (API.md §4.2, §4.3): each template whose id is not yet in settings.yaml
 * `seeded_templates` is written as an ordinary object (skipped if its id or name is taken) and its
 * id recorded either way, so a template the user deleted is never re-created.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FastifyBaseLogger } from 'fastify';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../core/config/load.ts';
import { AppError } from '../../core/errors/app-error.ts';
import type { Settings } from '../../core/settings.ts';
import type { StoreDocument } from '../../core/store/types.ts';

/** Shipped templates: config/templates/ of the project. */
export const DEFAULT_TEMPLATES_DIR = path.join(PROJECT_ROOT, 'config', 'templates');

/** Reads `<dir>/<key>.yaml` (`{<key>: [...]}`) and checks every entry against `schema`; throws on any problem. */
export async function loadTemplates<T>(dir: string, key: string, schema: TSchema): Promise<T[]> {
  const file = path.join(dir, `${key}.yaml`);
  const value = parse(await readFile(file, 'utf8')) as Record<string, unknown> | null;
  const entries = value?.[key];
  if (!Array.isArray(entries)) throw new Error(`${file}: expected a mapping with a "${key}" list`);
  return entries.map((entry, i) => {
    const first = Value.Errors(schema, entry).First();
    if (first) throw new Error(`${file}: ${key}[${i}]${first.path.replaceAll('/', '.')} ${first.message}`);
    return entry as T;
  });
}

export interface SeedOptions<T extends { id: string }> {
  dir: string;
  key: 'middlewares' | 'services';
  schema: TSchema;
  settings: StoreDocument<Settings>;
  log: FastifyBaseLogger;
  /** Writes one template as an ordinary object, or reports it skipped (id or name taken). */
  seed(entry: T): Promise<'created' | 'skipped'>;
}

/** Seeds the templates not yet recorded; an invalid template is logged and retried at the next start. */
export async function seedTemplates<T extends { id: string }>(
  options: SeedOptions<T>,
): Promise<{ created: string[]; skipped: string[] }> {
  const outcome = { created: [] as string[], skipped: [] as string[] };
  let templates: T[];
  try {
    templates = await loadTemplates<T>(options.dir, options.key, options.schema);
  } catch (err) {
    options.log.error({ err }, `${options.key} templates not seeded: ${(err as Error).message}`);
    return outcome;
  }
  const seeded = new Set(options.settings.get().seeded_templates ?? []);
  for (const template of templates) {
    if (seeded.has(template.id)) continue;
    try {
      outcome[(await options.seed(template)) === 'created' ? 'created' : 'skipped'].push(template.id);
    } catch (err) {
      const reason =
        err instanceof AppError
          ? `${err.message}${err.details ? ` ${JSON.stringify(err.details)}` : ''}`
          : (err as Error).message;
      options.log.error(
        { template: template.id },
        `${options.key} template ${template.id} is invalid and was not seeded: ${reason}`,
      );
    }
  }
  const recorded = [...outcome.created, ...outcome.skipped];
  if (recorded.length > 0) {
    await options.settings.update((current) => ({
      ...current,
      seeded_templates: [...new Set([...(current.seeded_templates ?? []), ...recorded])],
    }));
    options.log.info({ created: outcome.created, skipped: outcome.skipped }, `${options.key} templates seeded`);
  }
  return outcome;
}
