/** Reads and validates a plugin's `plugin.yaml` (API.md §6 manifest table). */
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import semver from 'semver';
import { SLUG } from '../ids.ts';
import { parseYaml } from '../store/yaml-file.ts';
import { defaultPrefix, prefixProblem } from './prefixes.ts';

export const MANIFEST_FILE = 'plugin.yaml';

/** Shape of plugin.yaml; the rules that need more than a type are in `checkManifest`. Unknown fields are ignored. */
export const ManifestSchema = Type.Object({
  name: Type.String(),
  version: Type.String(),
  api_version: Type.String(),
  entry: Type.String(),
  dependencies: Type.Optional(Type.Array(Type.String())),
  prefix: Type.Optional(Type.String()),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  config_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

/** A valid manifest, with its prefix filled in and its entry resolved to an absolute path. */
export type Manifest = Static<typeof ManifestSchema> & { prefix: string; dependencies: string[]; entryPath: string };

export type ManifestOutcome =
  | { ok: true; manifest: Manifest }
  /** `name` is the manifest's name when it could be read, so the failure is reported under it. */
  | { ok: false; message: string; name?: string; version?: string; api_version?: string; prefix?: string };

/** Reads `<pluginDir>/plugin.yaml` and checks every rule of the manifest table; `reserved` is reservedNames(). */
export async function readManifest(pluginDir: string, reserved: readonly string[]): Promise<ManifestOutcome> {
  let text: string;
  try {
    text = await readFile(path.join(pluginDir, MANIFEST_FILE), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      ok: false,
      message:
        code === 'ENOENT' ? `${MANIFEST_FILE} is missing` : `${MANIFEST_FILE} is unreadable: ${(err as Error).message}`,
    };
  }
  let raw: unknown;
  try {
    raw = parseYaml(text).value;
  } catch (err) {
    // The parser's message already names the line and column.
    return { ok: false, message: `${MANIFEST_FILE}: invalid YAML: ${(err as Error).message}` };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, message: `${MANIFEST_FILE} must hold a YAML mapping` };
  const known = pickStrings(raw as Record<string, unknown>);
  if (!Value.Check(ManifestSchema, raw)) {
    const first = Value.Errors(ManifestSchema, raw).First()!;
    return {
      ok: false,
      ...known,
      message: `${MANIFEST_FILE}: ${first.path.replace(/^\//, '') || 'manifest'}: ${first.message}`,
    };
  }
  const problem = checkManifest(raw, reserved);
  if (problem) return { ok: false, ...known, message: `${MANIFEST_FILE}: ${problem}` };
  const entryProblem = await checkEntry(pluginDir, raw.entry);
  if (entryProblem) return { ok: false, ...known, message: `${MANIFEST_FILE}: ${entryProblem}` };
  return {
    ok: true,
    manifest: {
      ...raw,
      prefix: raw.prefix ?? defaultPrefix(raw.name),
      dependencies: raw.dependencies ?? [],
      entryPath: path.resolve(pluginDir, raw.entry),
    },
  };
}

/** The identifying fields of a manifest that failed, so the report still says what it was. */
function pickStrings(raw: Record<string, unknown>): {
  name?: string;
  version?: string;
  api_version?: string;
  prefix?: string;
} {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { name: str(raw.name), version: str(raw.version), api_version: str(raw.api_version), prefix: str(raw.prefix) };
}

/** The rules a schema cannot express: slug name, reserved names, semver fields, dependencies, prefix. */
export function checkManifest(m: Static<typeof ManifestSchema>, reserved: readonly string[]): string | undefined {
  if (!SLUG.test(m.name)) return `name "${m.name}" must be a slug (${SLUG.source})`;
  if (reserved.includes(m.name)) return `name "${m.name}" is reserved for a built-in group`;
  if (!semver.valid(m.version)) return `version "${m.version}" is not a semantic version (e.g. 1.2.3)`;
  // A range nothing satisfies (">2 <1") is as unusable as a malformed one.
  if (!semver.validRange(m.api_version) || !semver.minVersion(m.api_version))
    return `api_version "${m.api_version}" is not a satisfiable semver range (e.g. ^1.0.0)`;
  const bad = (m.dependencies ?? []).find((d) => !SLUG.test(d) || d === m.name);
  if (bad !== undefined)
    return bad === m.name ? 'a plugin cannot depend on itself' : `dependency "${bad}" is not a valid name`;
  return m.prefix === undefined ? undefined : prefixProblem(m.prefix, reserved);
}

/** The entry must be a relative .js/.mjs path to an existing file that stays inside the plugin dir (symlinks included). */
async function checkEntry(pluginDir: string, entry: string): Promise<string | undefined> {
  if (path.isAbsolute(entry) || !/\.(m?js)$/.test(entry))
    return `entry "${entry}" must be a relative path to a .js or .mjs file`;
  const inside = (root: string, target: string) => {
    const relative = path.relative(root, target);
    return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
  };
  const target = path.resolve(pluginDir, entry);
  if (!inside(path.resolve(pluginDir), target)) return `entry "${entry}" points outside the plugin directory`;
  try {
    if (!(await stat(target)).isFile()) return `entry "${entry}" is not a file`;
    if (!inside(await realpath(pluginDir), await realpath(target)))
      return `entry "${entry}" resolves outside the plugin directory`;
  } catch {
    return `entry "${entry}" does not exist`;
  }
  return undefined;
}
