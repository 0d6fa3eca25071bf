/**
 * docker compose's interpolation of Gerbil's `ports:` (API.md §4.20 apply): the `.env` beside the
 * compose file, read from disk, and `${VAR:-default}` and the other forms compose knows.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import {
  DotEnvError,
  InterpolationError,
  interpolate,
  parseDotEnv,
  readComposeVariables,
} from '../../plugins/static/compose-env.ts';
import { portBindings, PortItemError } from '../../plugins/static/gerbil-ports.ts';
import { tempDir } from '../helpers/build.ts';

const DOT_ENV = `# ports of the Pangolin stack
HTTPS_PORT=8443
export SSH_PORT = 2222   # an inline comment
WG_PORT="51820"
BIND='127.0.0.1'
EMPTY=
LITERAL='$NOT_EXPANDED'
DERIVED=\${SSH_PORT}0
FROM_SHELL=\${HOME}/x
ONLY_NAME
`;

test('the .env beside the compose file: quotes, export, comments, empty values and references to earlier entries', async (t) => {
  const dir = await tempDir(t, 'sm-compose-env-');
  const compose = path.join(dir, 'docker-compose.yml');
  await writeFile(compose, 'services: {}\n');
  await writeFile(path.join(dir, '.env'), DOT_ENV);
  const vars = await readComposeVariables(compose);
  t.is(vars.file, path.join(dir, '.env'));
  t.deepEqual(Object.fromEntries(vars.values), {
    HTTPS_PORT: '8443',
    SSH_PORT: '2222',
    WG_PORT: '51820',
    BIND: '127.0.0.1',
    EMPTY: '',
    LITERAL: '$NOT_EXPANDED',
    DERIVED: '22220',
  });
  t.regex(vars.unresolved.get('FROM_SHELL')!, /FROM_SHELL in .*\.env:9 cannot be resolved: HOME is not set/);
  t.false(vars.values.has('ONLY_NAME'), 'a bare name is taken from the shell by compose: not set here');

  t.deepEqual(
    portBindings(
      [
        '${HTTPS_PORT}:443',
        '$SSH_PORT:22',
        '${WG_PORT}:${WG_PORT}/udp',
        '${BIND}:${HTTP_PORT:-80}:80',
        { target: 9000, published: '${METRICS_PORT-9100}', host_ip: '${BIND}' },
        '${EMPTY:-8080}:8080',
        '${EMPTY-7070}7:77',
      ],
      vars,
    ),
    {
      '443/tcp': [{ HostIp: '', HostPort: '8443' }],
      '22/tcp': [{ HostIp: '', HostPort: '2222' }],
      '51820/udp': [{ HostIp: '', HostPort: '51820' }],
      '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '80' }],
      '9000/tcp': [{ HostIp: '127.0.0.1', HostPort: '9100' }],
      '8080/tcp': [{ HostIp: '', HostPort: '8080' }],
      '77/tcp': [{ HostIp: '', HostPort: '7' }],
    },
  );
  const err = t.throws(() => portBindings(['443:443', '${FROM_SHELL}:1'], vars), { instanceOf: PortItemError });
  t.is(err?.index, 1);
  t.regex(err!.message, /FROM_SHELL in .*cannot be resolved: HOME is not set/);
});

test('no .env: only defaults resolve; an unreadable or malformed .env is a DotEnvError naming the line', async (t) => {
  const dir = await tempDir(t, 'sm-compose-env-');
  const compose = path.join(dir, 'docker-compose.yml');
  const none = await readComposeVariables(compose);
  t.is(none.values.size, 0);
  t.is(interpolate('${SSH_PORT:-2222}:22', none), '2222:22');
  t.throws(() => interpolate('${SSH_PORT}:22', none), {
    instanceOf: InterpolationError,
    message: /SSH_PORT is not set in .*\.env and has no default .*shell it runs in/,
  });

  await writeFile(path.join(dir, '.env'), 'A=1\nB="unterminated\n');
  const malformed = await t.throwsAsync(readComposeVariables(compose), { instanceOf: DotEnvError });
  t.like(malformed, { file: path.join(dir, '.env'), line: 2, message: 'the value of B has no closing "' });

  await writeFile(path.join(dir, '.env'), 'A=1\n');
  await chmod(path.join(dir, '.env'), 0o000);
  if (process.getuid?.() !== 0) {
    const unreadable = await t.throwsAsync(readComposeVariables(compose), { instanceOf: DotEnvError });
    t.regex(unreadable!.message, /cannot be read \(EACCES\)/);
  }
  await chmod(path.join(dir, '.env'), 0o644);
  const asDir = path.join(dir, 'sub');
  await mkdir(path.join(asDir, '.env'), { recursive: true });
  const directory = await t.throwsAsync(readComposeVariables(path.join(asDir, 'compose.yaml')), {
    instanceOf: DotEnvError,
  });
  t.regex(directory!.message, /cannot be read \(EISDIR\)/);
});

test('compose forms: $$, :? and ?, :+ and +, nested defaults; bad syntax is refused', (t) => {
  const vars = parseDotEnv('SET=5\nBLANK=\n', '/stack/.env');
  const cases: Array<[string, string]> = [
    ['$$SET', '$SET'],
    ['${SET:?need it}', '5'],
    ['${BLANK?need it}', ''],
    ['${SET:+1}${BLANK:+2}${BLANK+3}${UNSET+4}', '13'],
    ['${UNSET:-${SET}0}', '50'],
    ['${UNSET:-${OTHER:-6}}', '6'],
    ['a${SET}b$SET', 'a5b5'],
  ];
  for (const [text, expected] of cases) t.is(interpolate(text, vars), expected, text);
  const refused: Array<[string, RegExp]> = [
    ['${BLANK:?set the port}', /BLANK is required: set the port/],
    ['${UNSET?}', /UNSET is required: UNSET is not set/],
    ['${SET', /without its "}"/],
    ['${1X}', /does not start with a variable name/],
    ['${SET/a/b}', /unknown modifier after SET/],
    ['80$', /neither \$NAME/],
  ];
  for (const [text, message] of refused) t.throws(() => interpolate(text, vars), { message }, text);
});
