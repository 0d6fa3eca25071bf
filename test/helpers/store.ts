/** A store on a temp dir with a test collection, for store tests and benchmarks. */
import type { ExecutionContext } from 'ava';
import { Type, type Static } from '@sinclair/typebox';
import { openStore, type YamlStore } from '../../core/store/index.ts';
import type { StoreLogger } from '../../core/store/context.ts';

export const ItemSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  value: Type.Integer(),
  payload: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String())),
});
export type Item = Static<typeof ItemSchema>;

/** Logger that keeps warnings so tests can assert what was reported. */
export function memoryLogger(): StoreLogger & { lines: { level: string; msg: string; obj: object }[] } {
  const lines: { level: string; msg: string; obj: object }[] = [];
  const push = (level: string) => (obj: object, msg: string) => {
    lines.push({ level, msg, obj });
  };
  return { lines, info: push('info'), warn: push('warn'), error: push('error') };
}

export async function openTestStore(
  t: ExecutionContext,
  dataDir: string,
  options: { watch?: boolean | 'later' } = {},
): Promise<YamlStore> {
  const store = await openStore({ dataDir, logger: memoryLogger(), watch: options.watch });
  t.teardown(() => store.close());
  return store;
}
