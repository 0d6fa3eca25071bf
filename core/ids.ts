/**
 * The id format of API.md §2.8 and the one plain-object test, shared by core (store file names,
 * config, tokens) and everything above it. Slugs derived from names are model/ids.ts.
 */

/** Source of the slug id pattern, for JSON Schema `pattern` fields. */
export const SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';
/** A slug id (API.md §2.8): lower-case letters, digits and `-`, 1–63 characters, not starting with `-`. */
export const SLUG = new RegExp(SLUG_PATTERN);

/** A JSON object (not null, not an array). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
