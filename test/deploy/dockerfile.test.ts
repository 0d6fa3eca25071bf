/**
 * The Dockerfile, read as Docker would (no engine can build images on this machine). Its runtime
 * steps — `npm ci --omit=dev --ignore-scripts`, config/ + dist/, `node dist/plugins/main.js`, the
 * HEALTHCHECK command — are run for real in production-server.test.ts.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { execForm, parseDockerfile, type Stage } from '../helpers/dockerfile.ts';
import { REPO } from '../helpers/production-app.ts';

const { stages } = parseDockerfile(path.join(REPO, 'Dockerfile'));
const build = stages.find((s) => s.name === 'build')!;
const runtime = stages.at(-1)!;
const all = (stage: Stage, keyword: string) =>
  stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const one = (stage: Stage, keyword: string) => {
  const found = all(stage, keyword);
  if (found.length !== 1) throw new Error(`expected one ${keyword} in stage ${stage.name}, found ${found.length}`);
  return found[0];
};
const ignorePatterns = readFileSync(path.join(REPO, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const ignored = picomatch(
  ignorePatterns.flatMap((p) => [p, `${p}/**`]),
  { dot: true },
);

test('two stages on Node 24 LTS (bookworm-slim): build, then runtime', (t) => {
  t.deepEqual(
    stages.map((s) => s.name),
    ['build', 'runtime'],
  );
  for (const stage of stages) t.is(stage.image, 'node:24-bookworm-slim');
});

test('the build stage installs everything without scripts, then compiles with the build script', (t) => {
  const runs = all(build, 'RUN');
  t.true(runs.some((r) => /^npm ci --ignore-scripts\b/.test(r)));
  t.true(runs.some((r) => r === 'npm run build:server'));
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  t.truthy(pkg.scripts['build:server']);
  t.regex(pkg.scripts.build, /build:server/);
});

test('the web UI is built in the build stage from a context without a local ui/dist, and served from ui/dist at run time', (t) => {
  t.true(all(build, 'RUN').includes('npm run build:ui'));
  t.true(all(build, 'COPY').includes('ui ./ui'));
  t.true(all(runtime, 'COPY').includes('--from=build /app/ui/dist ./ui/dist'));
  t.true(ignored('ui/dist/index.html'), "a developer's own build never reaches the image");
  t.false(ignored('ui/src/main.tsx'));
});

test('the runtime stage: production dependencies only, dist/ from the build stage, a non-root user, tini as PID 1', (t) => {
  const runs = all(runtime, 'RUN');
  t.true(runs.some((r) => /npm ci --omit=dev --ignore-scripts\b/.test(r)));
  t.true(runs.some((r) => /apt-get install .*\btini\b/.test(r)));
  t.true(all(runtime, 'COPY').includes('--from=build /app/dist ./dist'));
  const user = one(runtime, 'USER');
  t.notRegex(user, /^(root|0)(:|$)/);
  t.true(runs.some((r) => r.includes(`useradd`) && r.includes(`--uid 3456`) && r.includes(user)));
  t.deepEqual(execForm(one(runtime, 'ENTRYPOINT')), ['/usr/bin/tini', '--']);
  t.deepEqual(execForm(one(runtime, 'CMD')), ['node', '--max-semi-space-size=8', 'dist/plugins/main.js']);
  t.deepEqual(execForm(one(runtime, 'VOLUME')), ['/data', '/backups']);
  const env = one(runtime, 'ENV');
  t.regex(env, /DATA_DIR=\/data\b/);
  t.regex(env, /BACKUP_DIR=\/backups\b/);
  t.regex(env, /NODE_ENV=production/);
  t.true(
    runs.some((r) => /chown stack:stack \/data \/backups/.test(r)),
    'the volumes start owned by the runtime user',
  );
});

test('HEALTHCHECK runs node against /api/health (exec form, no shell or curl needed)', (t) => {
  const healthcheck = one(runtime, 'HEALTHCHECK');
  const command = execForm(healthcheck.slice(healthcheck.indexOf('CMD ') + 4));
  t.is(command?.[0], 'node');
  t.regex(command?.[2] ?? '', /\/api\/health/);
  t.regex(healthcheck, /--interval=\d+s/);
});

test('CMD starts the file tsconfig.build.json emits for plugins/main.ts', (t) => {
  const buildConfig = JSON.parse(readFileSync(path.join(REPO, 'tsconfig.build.json'), 'utf8'));
  t.is(buildConfig.compilerOptions.outDir, 'dist');
  t.is(buildConfig.compilerOptions.rootDir, '.');
  t.true(buildConfig.compilerOptions.rewriteRelativeImportExtensions);
  t.true(existsSync(path.join(REPO, 'plugins', 'main.ts')));
  // npm start runs what the image runs (exec: npm's forwarded signals reach node itself)
  const cmd = execForm(one(runtime, 'CMD'))!.join(' ');
  t.is(JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')).scripts.start, `exec ${cmd}`);
});

test('every COPY source exists in the build context and is not excluded by .dockerignore', (t) => {
  for (const stage of stages) {
    for (const args of all(stage, 'COPY')) {
      if (args.startsWith('--from=')) continue;
      const sources = args
        .split(/\s+/)
        .filter((a) => !a.startsWith('--'))
        .slice(0, -1);
      for (const source of sources) {
        t.true(existsSync(path.join(REPO, source)), `${source} exists`);
        t.false(ignored(source), `${source} is sent to the daemon`);
      }
    }
  }
});

test('.dockerignore keeps state, secrets and local trees out of the build context', (t) => {
  for (const entry of [
    '.git',
    'node_modules',
    'dist',
    'data',
    'data/auth/initial-admin-token',
    'backups',
    'ext-plugins',
    'config/local.yaml',
    '.env',
  ]) {
    t.true(ignored(entry), entry);
  }
  for (const needed of [
    'package.json',
    'package-lock.json',
    'core/app.ts',
    'config/default.yaml',
    'config/templates/services.yaml',
  ])
    t.false(ignored(needed), needed);
});
