/** Which RepoDigests entry belongs to an image reference (the update check's current_digest). */
import test from 'ava';
import { currentDigest, pinnedDigest, repositoryOf } from '../../plugins/container/digests.ts';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;

test('repositoryOf drops tag and digest and the docker.io/library prefixes', (t) => {
  t.is(repositoryOf('traefik:v3.1'), 'traefik');
  t.is(repositoryOf('docker.io/library/traefik:v3.1'), 'traefik');
  t.is(repositoryOf('fosrl/pangolin'), 'fosrl/pangolin');
  t.is(repositoryOf('registry.local:5000/team/app:1'), 'registry.local:5000/team/app');
  t.is(repositoryOf(`crowdsecurity/crowdsec@${A}`), 'crowdsecurity/crowdsec');
});

test('currentDigest picks the entry of the reference repository, else the first, else null', (t) => {
  t.is(currentDigest('traefik:v3', [`mirror.local/traefik@${B}`, `traefik@${A}`]), A);
  t.is(currentDigest('docker.io/library/traefik:v3', [`traefik@${A}`]), A);
  t.is(currentDigest('other:1', [`traefik@${B}`]), B);
  t.is(currentDigest('traefik:v3', []), null);
  t.is(currentDigest('traefik:v3', undefined), null);
});

test('a reference pinned by digest is its own current digest', (t) => {
  t.is(pinnedDigest(`traefik@${A}`), A);
  t.is(pinnedDigest('traefik:v3'), null);
  t.is(currentDigest(`traefik@${A}`, [`traefik@${B}`]), A);
});
