/**
 * Decides, before anything is imported, what happens to each plugin (API.md §6): disabled, failed
 * (manifest, duplicate name, config, prefix clash, dependencies), incompatible, or to be loaded, and
 * in which order (dependencies first).
 */
import semver from 'semver';
import { HOST_API_VERSION } from '../version.ts';
import type { Candidate } from './discover.ts';
import type { Manifest } from './manifest.ts';
import type { ConfigOutcome } from './plugin-config.ts';
import { defaultPrefix, prefixesOverlap, prefixProblem } from './prefixes.ts';
import type { ExtPluginRecord, ExtPluginStatus } from './types.ts';

/** A record while loading: `pending` until its registration has finished one way or the other. */
export type LoaderRecord = Omit<ExtPluginRecord, 'status'> & { status: ExtPluginStatus | 'pending' };

/** One plugin's record plus what loading it needs. */
export interface PlannedPlugin {
  record: LoaderRecord;
  /** Present while the plugin is still meant to load (and for incompatible ones). */
  manifest?: Manifest;
  config?: Record<string, unknown>;
  /** True when this plugin holds its prefix, so its 503 fallback may be mounted there. */
  ownsPrefix: boolean;
}

export interface PlanInput {
  candidates: Candidate[];
  /** plugins.enabled; `*` = all. */
  enabled: string[];
  /** plugins.config */
  sections: Record<string, unknown>;
  /** Names no plugin may take: reservedNames() of the built-in group list. */
  reserved: readonly string[];
  /** Whether a built-in group of that name is registered (app.hasPlugin). */
  hasBuiltin: (name: string) => boolean;
  validateConfig: (name: string, schema: Record<string, unknown> | undefined, section: unknown) => ConfigOutcome;
}

export interface LoadPlan {
  /** Every plugin found or named in plugins.enabled. */
  all: PlannedPlugin[];
  /** The plugins to import and register, dependencies first. */
  load: PlannedPlugin[];
}

const byName = (a: PlannedPlugin, b: PlannedPlugin) =>
  a.record.name < b.record.name ? -1 : a.record.name > b.record.name ? 1 : 0;
const pending = (p: PlannedPlugin) => p.record.status === 'pending';

/** Marks a plugin failed with a loader-found problem (no stack: the message says it all). */
function fail(plugin: PlannedPlugin, message: string, status: 'failed' | 'incompatible' = 'failed'): void {
  plugin.record.status = status;
  plugin.record.error = { message, stack: null };
}

/** Builds the plan; plugins still to load are `pending`. */
export function planPlugins(input: PlanInput): LoadPlan {
  const isEnabled = (name: string) => input.enabled.includes('*') || input.enabled.includes(name);
  const all: PlannedPlugin[] = [];
  const firstByName = new Map<string, PlannedPlugin>();
  for (const { dir, outcome } of input.candidates) {
    const named = outcome.ok ? outcome.manifest : outcome;
    const name = named.name || dir;
    const record: LoaderRecord = {
      name,
      dir,
      version: named.version ?? null,
      api_version: named.api_version ?? null,
      prefix: named.prefix ?? defaultPrefix(name),
      status: 'pending',
      error: null,
      routes: [],
      loaded_at: null,
    };
    const plugin: PlannedPlugin = { record, ownsPrefix: false };
    all.push(plugin);
    if (!isEnabled(name)) {
      record.status = 'disabled';
      record.error = outcome.ok ? null : { message: outcome.message, stack: null };
    } else if (!outcome.ok) {
      fail(plugin, outcome.message);
    } else if (firstByName.has(name)) {
      fail(plugin, `name "${name}" is already used by the plugin in directory ${firstByName.get(name)!.record.dir}`);
    } else {
      firstByName.set(name, plugin);
      checkLoadable(plugin, outcome.manifest, input);
    }
  }
  for (const name of input.enabled) {
    if (name !== '*' && !all.some((p) => p.record.name === name)) {
      const record: LoaderRecord = {
        name,
        dir: null,
        version: null,
        api_version: null,
        prefix: defaultPrefix(name),
        status: 'pending',
        error: null,
        routes: [],
        loaded_at: null,
      };
      const plugin: PlannedPlugin = { record, ownsPrefix: false };
      fail(plugin, `plugin "${name}" is enabled but no directory in the plugins dir holds it`);
      all.push(plugin);
    }
  }
  claimPrefixes(all, firstByName, input.reserved);
  resolveDependencies(all, firstByName, input.reserved, input.hasBuiltin);
  return { all: all.sort(byName), load: dependencyOrder([...firstByName.values()].filter(pending)) };
}

/** api_version and config: an unsatisfied range is `incompatible`, an invalid config section `failed`. */
function checkLoadable(plugin: PlannedPlugin, manifest: Manifest, input: PlanInput): void {
  plugin.manifest = manifest;
  if (!semver.satisfies(HOST_API_VERSION, manifest.api_version)) {
    fail(
      plugin,
      `plugin needs host API ${manifest.api_version}; this host provides ${HOST_API_VERSION}`,
      'incompatible',
    );
    return;
  }
  const config = input.validateConfig(manifest.name, manifest.config_schema, input.sections[manifest.name]);
  if (config.ok) plugin.config = config.config;
  else fail(plugin, config.message);
}

/**
 * Claims prefixes in this order: valid manifests on their default prefix `/api/ext/<name>`, then
 * valid manifests with a custom prefix (by name), then broken plugins. So a custom prefix can never
 * take another plugin's own default prefix, and a broken plugin never takes a working one's; a
 * later overlapping claim fails. Broken plugins only get a free, well-formed prefix.
 */
function claimPrefixes(all: PlannedPlugin[], valid: Map<string, PlannedPlugin>, reserved: readonly string[]): void {
  const claimed: PlannedPlugin[] = [];
  const isDefault = (p: PlannedPlugin) => (p.record.prefix === defaultPrefix(p.record.name) ? 0 : 1);
  const validSet = new Set(valid.values());
  const ordered = [
    ...[...validSet].sort((a, b) => isDefault(a) - isDefault(b) || byName(a, b)),
    ...all.filter((p) => p.record.status !== 'disabled' && !validSet.has(p)),
  ];
  for (const plugin of ordered) {
    const prefix = plugin.record.prefix;
    if (prefixProblem(prefix, reserved)) continue;
    const holder = claimed.find((other) => prefixesOverlap(prefix, other.record.prefix));
    if (!holder) {
      claimed.push(plugin);
      plugin.ownsPrefix = true;
    } else if (pending(plugin)) {
      fail(plugin, `prefix ${prefix} clashes with prefix ${holder.record.prefix} of plugin ${holder.record.name}`);
    }
  }
}

/** Fails plugins whose dependencies are missing, disabled or failed, repeating until nothing changes. */
function resolveDependencies(
  all: PlannedPlugin[],
  valid: Map<string, PlannedPlugin>,
  reserved: readonly string[],
  hasBuiltin: (name: string) => boolean,
): void {
  for (let changed = true; changed;) {
    changed = false;
    for (const plugin of all.filter(pending)) {
      const problem = plugin
        .manifest!.dependencies.map((dep) => {
          if (reserved.includes(dep))
            return hasBuiltin(dep) ? undefined : `missing dependency ${dep}: that built-in group is not registered`;
          const target = valid.get(dep) ?? all.find((p) => p.record.name === dep);
          if (!target) return `missing dependency ${dep}: no plugin has that name`;
          return pending(target) ? undefined : `dependency ${dep} is ${target.record.status}`;
        })
        .find((p) => p !== undefined);
      if (problem) {
        fail(plugin, problem);
        changed = true;
      }
    }
  }
}

/** Topological order (ties by name); plugins left in a cycle fail. */
function dependencyOrder(plugins: PlannedPlugin[]): PlannedPlugin[] {
  const ordered: PlannedPlugin[] = [];
  let rest = [...plugins].sort(byName);
  while (rest.length > 0) {
    const names = new Set(rest.map((p) => p.record.name));
    const ready = rest.filter((p) => p.manifest!.dependencies.every((d) => !names.has(d)));
    if (ready.length === 0) {
      for (const p of rest) fail(p, `dependency cycle among ${[...names].join(', ')}`);
      break;
    }
    ordered.push(...ready);
    rest = rest.filter((p) => !ready.includes(p));
  }
  return ordered;
}
