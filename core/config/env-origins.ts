/**
 * Which settings came from an environment variable, and the warning for variables that only seed a
 * data file (API.md §2.11): `PANGOLIN_URL` and the other data source variables write
 * datasources.yaml on the first start, `PROXY_STATIC_CONFIG` is overridden by settings.yaml. Set
 * again later with another value, such a variable changes nothing: the operator is told once at
 * start which variable, both values and the API call that changes the file.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig } from './schema.ts';

const ORIGINS = new WeakMap<AppConfig, Readonly<Record<string, string>>>();

/** Records, for a loaded config, the env variable that set each dotted key (core/config/load.ts). */
export function recordEnvOrigins(config: AppConfig, origins: Record<string, string>): void {
  ORIGINS.set(config, Object.freeze({ ...origins }));
}

/** The env variable that set `key` (`datasources.pangolin_url` → `PANGOLIN_URL`), or null. */
export function envOrigin(config: AppConfig, key: string): string | null {
  return ORIGINS.get(config)?.[key] ?? null;
}

/** A setting that seeded a data file, as the file holds it now. */
export interface SeededSetting {
  /** Dotted config key, e.g. `datasources.pangolin_url`. */
  key: string;
  /** The value the environment gives (already normalised like the file's). */
  envValue: string;
  /** The value in effect from the file; null when the file does not hold one (the env value is used). */
  fileValue: string | null;
  /** The data file, relative to the data dir. */
  file: string;
  /** The API call that changes the file's value. */
  change: string;
}

/** Logs one warning per setting set by an env variable whose value differs from the file's. */
export function warnSeededEnv(log: FastifyBaseLogger, config: AppConfig, settings: SeededSetting[]): void {
  for (const setting of settings) {
    const variable = envOrigin(config, setting.key);
    if (variable === null || setting.fileValue === null || setting.fileValue === setting.envValue) continue;
    log.warn(
      {
        variable,
        env_value: setting.envValue,
        file: setting.file,
        file_value: setting.fileValue,
        change_with: setting.change,
      },
      `${variable}=${setting.envValue} is ignored: it only seeds ${setting.file}, which holds ${setting.fileValue}; change it with ${setting.change}`,
    );
  }
}
