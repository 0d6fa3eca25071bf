/** Names and the slug ids derived from them (API.md §2.8); the slug pattern itself is core/ids.ts. */
import { validationError } from '../core/errors/app-error.ts';

/** Slug of a text: NFKD, diacritics removed, lower case, runs outside [a-z0-9] → `-`, trimmed, ≤ 63; empty → `fallback`. */
export function slugify(text: string, fallback: string): string {
  const slug = text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/\p{M}/gu, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return slug || fallback;
}

/** slugify(name), made unique: a taken slug gets `-2`, `-3`, … within 63 characters. */
export function uniqueSlug(name: string, fallback: string, taken: (id: string) => boolean): string {
  const base = slugify(name, fallback);
  if (!taken(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = base.slice(0, 63 - suffix.length) + suffix;
    if (!taken(candidate)) return candidate;
  }
}

// control characters are exactly what this pattern is for
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Validates a `name` (API.md §2.8: 1–100 chars after trimming, no control characters); returns it trimmed or throws 422. */
export function checkName(raw: string, pointer = '/name'): string {
  const name = raw.trim();
  const problem =
    name.length === 0
      ? 'must not be empty'
      : name.length > 100
        ? 'must be at most 100 characters'
        : CONTROL.test(name)
          ? 'must not contain control characters'
          : null;
  if (problem) throw validationError([{ path: pointer, message: problem }]);
  return name;
}
