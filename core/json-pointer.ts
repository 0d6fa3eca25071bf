/** One reference token of a JSON Pointer (RFC 6901 §3): `~` → `~0`, `/` → `~1`. */
export const pointerToken = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');
