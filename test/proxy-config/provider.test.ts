import test from 'ava';
import { parseLossless } from '../../model/lossless-json.ts';
import { ConfigProvider } from '../../plugins/proxy-config/service.ts';
import type { GenerationInput } from '../../model/generate/generate.ts';
import { appV2, authelia, pangolinInput, rateLimit, workedResource, WORKED_UPSTREAM } from './inputs.ts';
import { waitFor } from '../helpers/wait.ts';

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

test('the schema check runs after the swap, never before it answers: the first waits for startup to settle, later ones follow at once', async (t) => {
  const upstream = parseLossless(WORKED_UPSTREAM);
  let resources = [workedResource()];
  const checked: unknown[] = [];
  const provider = new ConfigProvider({
    inputs: () => pangolinInput(upstream, { middlewares: [authelia, rateLimit], services: [appV2], resources }),
    schemaCheck: (config) => {
      checked.push(config);
      return [{ path: '/http', message: 'checked' }];
    },
    logger: quiet,
    now: () => new Date(0),
  });
  t.teardown(() => provider.close());
  const first = await provider.regenerate();
  // a second generation before the first check: the first is never checked
  const withGhost = workedResource();
  withGhost.middlewares = [{ id: 'authelia', priority: 100 }];
  resources = [withGhost];
  const second = await provider.regenerate();
  t.not(second?.json.etag, first?.json.etag);
  t.deepEqual(first?.schemaWarnings, []);
  t.deepEqual(second?.schemaWarnings, [], 'not checked at once');
  await waitFor(() => (second!.schemaWarnings.length > 0 ? true : undefined), 30_000);
  t.is(checked.at(-1), second!.result.config);
  t.deepEqual(second!.schemaWarnings, [{ path: '/http', message: 'checked' }]);
  // once the schema is compiled, every later generation is checked right after its swap
  const before = checked.length;
  resources = [workedResource()];
  const third = await provider.regenerate();
  await waitFor(() => (third!.schemaWarnings.length > 0 ? true : undefined), 30_000);
  t.is(checked.length, before + 1);
  t.is(checked.at(-1), third!.result.config);
});
