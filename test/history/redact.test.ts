/** Redaction of secrets in the config history (plugins/history/redact.ts), without git. */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { Redactor, UnknownSecretError } from '../../plugins/history/redact.ts';
import { tempDir } from '../helpers/build.ts';

async function redactor(t: Parameters<typeof tempDir>[0]): Promise<Redactor & { dir: string }> {
  const dir = path.join(await tempDir(t, 'sm-redact-'), '.history');
  await mkdir(dir, { recursive: true });
  const r = new Redactor(dir);
  await r.open();
  return Object.assign(r, { dir });
}

const TOKEN = /^redacted:[0-9a-f]{16}$/;

test('secret keys in any YAML style, URL passwords and channel headers become keyed hashes; the rest is byte for byte', async (t) => {
  const r = await redactor(t);
  const plain = Buffer.from('# a comment\nname: Limit\ntype: rateLimit\nconfig: {average: 1}\n');
  t.is(r.redact('middlewares/limit.yaml', plain), plain, 'no secret: the same bytes');

  const sources = Buffer.from(
    'active: p\nsources:\n  p:\n    url: https://admin:hunter2@pangolin.example/api\n    basic_auth: {username: u, "password": s3cret}\n',
  );
  const out = r.redact('datasources.yaml', sources).toString();
  t.false(out.includes('hunter2'));
  t.false(out.includes('s3cret'));
  const parsed = parse(out);
  t.regex(parsed.sources.p.basic_auth.password, TOKEN);
  t.regex(parsed.sources.p.url, /^https:\/\/admin:redacted:[0-9a-f]{16}@pangolin\.example\/api$/);
  t.is(parsed.sources.p.basic_auth.username, 'u');

  const channel = Buffer.from(
    'name: Hook\ntype: webhook\nconfig:\n  url: https://h.example\n  headers:\n    Authorization: Bearer abc\n',
  );
  t.regex(parse(r.redact('notifications/hook.yaml', channel).toString()).config.headers.Authorization, TOKEN);

  const tokens = Buffer.from('- name: a\n  hash: 0123abcd\n  role: admin\n  last_used_at: 2026-01-01T00:00:00.000Z\n');
  const t2 = parse(r.redact('auth/tokens.yaml', tokens).toString());
  t.regex(t2[0].hash, TOKEN);
  t.false('last_used_at' in t2[0]);

  // the same value, the same hash (a changed secret shows as a changed line, an unchanged one does not)
  t.is(r.redact('datasources.yaml', sources).toString(), out);
});

test('whole secret files, unparsable secrets files; unredact gives the bytes back; an unknown hash is refused', async (t) => {
  const r = await redactor(t);
  const key = Buffer.from('-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n');
  const committed = r.redact('mtls/ca.key', key);
  t.regex(committed.toString().trim(), TOKEN);
  t.deepEqual(r.unredact('mtls/ca.key', committed), key);
  t.regex(r.redact('auth/initial-admin-token', Buffer.from('smk_x\n')).toString().trim(), TOKEN);
  t.regex(r.redact('datasources.yaml', Buffer.from('sources: [unclosed password: x')).toString().trim(), TOKEN);
  const broken = Buffer.from('name: [unclosed\n');
  t.is(r.redact('middlewares/broken.yaml', broken), broken, 'an unparsable non-secret file is kept');

  const sources = Buffer.from('sources:\n  p:\n    basic_auth: {username: u, password: s3cret}\n');
  const stored = r.redact('datasources.yaml', sources);
  t.is(parse(r.unredact('datasources.yaml', stored).toString()).sources.p.basic_auth.password, 's3cret');
  // a new Redactor on the same dir knows the values saved before
  await r.save();
  const again = new Redactor(r.dir);
  await again.open();
  t.is(parse(again.unredact('datasources.yaml', stored).toString()).sources.p.basic_auth.password, 's3cret');
  t.throws(() => again.unredact('datasources.yaml', Buffer.from('password: redacted:0000000000000000\n')), {
    instanceOf: UnknownSecretError,
  });
});
