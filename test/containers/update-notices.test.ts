/**
 * The record of told image updates (plugins/container/update-notices.ts, API.md §4.11): the data file
 * container/image-update-notices.yaml, the legacy .cache file still honoured, and how a node merges
 * the file another leader wrote with what it holds (per service, the later record wins). A store of
 * files in memory stands for the data dir (readRaw/writeRaw are all the record uses).
 */
import test from 'ava';
import { parse } from 'yaml';
import {
  IMAGE_UPDATE_NOTICES_FILE,
  ImageUpdateNotices,
  LEGACY_IMAGE_UPDATE_NOTICES_FILE,
  type NoticeStore,
} from '../../plugins/container/update-notices.ts';

/** readRaw/writeRaw over a map of relative paths, and the modes written. */
function memoryStore(files: Record<string, string> = {}) {
  const modes: Record<string, number | undefined> = {};
  const store: NoticeStore = {
    readRaw: async (relative) => (relative in files ? Buffer.from(files[relative]) : undefined),
    writeRaw: async (relative, content, mode) => {
      files[relative] = content.toString();
      modes[relative] = mode;
    },
  };
  return { store, files, modes };
}

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const D3 = `sha256:${'3'.repeat(64)}`;
const at = (iso: string) => () => new Date(iso);

test('the record is written as YAML in the container directory, and read back by the next start', async (t) => {
  const { store, files, modes } = memoryStore();
  const first = new ImageUpdateNotices(store, at('2030-01-01T10:00:00.000Z'));
  await first.load();
  t.true(first.set('svc-ok', D1));
  t.false(first.set('svc-ok', D1), 'the same digest again is no change');
  await first.save();
  t.is(IMAGE_UPDATE_NOTICES_FILE, 'container/image-update-notices.yaml');
  t.deepEqual(parse(files[IMAGE_UPDATE_NOTICES_FILE]), {
    format: 1,
    notices: [{ service: 'svc-ok', latest_digest: D1, recorded_at: '2030-01-01T10:00:00.000Z' }],
  });
  t.is(modes[IMAGE_UPDATE_NOTICES_FILE], 0o600);

  const next = new ImageUpdateNotices(store, at('2030-01-02T10:00:00.000Z'));
  await next.load();
  t.false(next.set('svc-ok', D1), 'a restart does not tell the same digest again');
  t.true(next.set('svc-ok', D2));
});

test('the legacy .cache record is honoured at start (an upgrade tells nothing again)', async (t) => {
  const { store, files } = memoryStore({
    [LEGACY_IMAGE_UPDATE_NOTICES_FILE]: JSON.stringify({
      format: 1,
      notices: [{ service: 'svc-ok', latest_digest: D1 }],
    }),
  });
  const notices = new ImageUpdateNotices(store, at('2030-01-01T10:00:00.000Z'));
  await notices.load();
  t.false(notices.set('svc-ok', D1));
  t.true(notices.set('svc-other', D2));
  await notices.save();
  // the legacy file is left as it was; the new record holds both
  t.deepEqual(
    parse(files[IMAGE_UPDATE_NOTICES_FILE]).notices.map((n: Record<string, unknown>) => [n.service, n.latest_digest]),
    [
      ['svc-ok', D1],
      ['svc-other', D2],
    ],
  );
  // a data file already written by this version wins over the legacy one
  files[IMAGE_UPDATE_NOTICES_FILE] =
    'format: 1\nnotices:\n  - {service: svc-ok, latest_digest: null, recorded_at: "2030-01-02T00:00:00Z"}\n';
  const upgraded = new ImageUpdateNotices(store);
  await upgraded.load();
  t.true(upgraded.set('svc-ok', D1), 'found up to date since: the digest is news again');
});

test('reload takes in what another leader recorded later, and keeps what this node recorded later', async (t) => {
  const { store, files } = memoryStore();
  let clock = Date.parse('2030-01-01T10:00:00.000Z');
  const notices = new ImageUpdateNotices(store, () => new Date(clock));
  await notices.load();
  notices.set('svc-ok', D1);
  notices.set('svc-bk', D1);
  notices.set('svc-other', D1);
  await notices.save();

  // another node led for a while: it told D2 for svc-ok, found svc-bk up to date, and svc-new D3
  files[IMAGE_UPDATE_NOTICES_FILE] = [
    'format: 1',
    'notices:',
    `  - {service: svc-ok, latest_digest: "${D2}", recorded_at: "2030-01-01T11:00:00.000Z"}`,
    `  - {service: svc-bk, latest_digest: null, recorded_at: "2030-01-01T11:00:00.000Z"}`,
    `  - {service: svc-other, latest_digest: "${D3}", recorded_at: "2030-01-01T09:00:00.000Z"}`,
    `  - {service: svc-new, latest_digest: "${D3}", recorded_at: "2030-01-01T11:00:00.000Z"}`,
    '  - {service: 7}',
    '  - null',
    '',
  ].join('\n');
  clock = Date.parse('2030-01-01T12:00:00.000Z');
  await notices.reload();
  t.false(notices.set('svc-ok', D2), "the other leader's later digest is told already");
  t.false(notices.set('svc-new', D3));
  t.false(notices.set('svc-other', D1), "this node's later record is kept over an older one in the file");
  t.true(notices.set('svc-bk', D1), 'found up to date by the other leader: D1 is news again');

  // an unreadable file changes nothing
  files[IMAGE_UPDATE_NOTICES_FILE] = 'notices: [unclosed';
  await notices.reload();
  t.false(notices.set('svc-bk', D1));
});

test('without a store the record is kept in memory only', async (t) => {
  const notices = new ImageUpdateNotices(null);
  await notices.load();
  t.true(notices.set('svc-ok', D1));
  await notices.save();
  t.false(notices.set('svc-ok', D1));
  t.true(notices.set('svc-ok', null));
  t.true(notices.set('svc-ok', D1), 'up to date in between: the digest is news again');
});
