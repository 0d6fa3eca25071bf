import test from 'ava';
import { parseLossless } from '../../model/lossless-json.ts';
import { ConfigProvider } from '../../plugins/proxy-config/service.ts';
import type { GenerationInput } from '../../model/generate/generate.ts';
import { appV2, authelia, pangolinInput, rateLimit, workedResource, WORKED_UPSTREAM } from './inputs.ts';

const quiet = { info: () => undefined, debug: () => undefined, error: () => undefined };

test('a regeneration with the same bytes still refreshes the reported dangling references', async (t) => {
  const upstream = parseLossless(WORKED_UPSTREAM);
  const withGhost = workedResource();
  withGhost.middlewares = [...(withGhost.middlewares ?? []), { id: 'ghost', priority: 100 }];
  let input: GenerationInput = pangolinInput(upstream, {
    middlewares: [authelia, rateLimit],
    services: [appV2],
    resources: [withGhost],
  });
  const provider = new ConfigProvider({
    inputs: () => input,
    schemaCheck: null,
    logger: quiet,
    now: () => new Date(0),
  });
  const first = await provider.regenerate();
  t.deepEqual(first?.result.dangling_references, [
    { from: '/api/resources/1-app-router', ref: '/api/middlewares/ghost' },
  ]);

  // the assignment of the missing middleware is removed: the config bytes stay the same
  input = pangolinInput(upstream, {
    middlewares: [authelia, rateLimit],
    services: [appV2],
    resources: [workedResource()],
  });
  const second = await provider.regenerate();
  t.is(second?.json.etag, first?.json.etag);
  t.deepEqual(provider.current()?.result.dangling_references, []);
  provider.close();
});
