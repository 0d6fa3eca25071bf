import test from 'ava';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../core/app.ts';
import { tempDir, testConfig } from '../helpers/build.ts';

test('a build that fails after the store is open closes what it opened (data dir watcher)', async (t) => {
  const config = testConfig(path.join(await tempDir(t), 'data'));
  let seen: FastifyInstance['store'] | undefined;
  const broken = {
    name: 'broken',
    plugin: async (app: FastifyInstance) => {
      seen = app.store;
      throw new Error('broken group');
    },
  };
  await t.throwsAsync(buildApp({ config, groups: [broken], logger: false }), { message: 'broken group' });
  t.truthy(seen);
  t.true((seen as unknown as { closed: boolean }).closed, 'the store (and its watcher) is closed');
});
