/** Host globs of provider targets: what is valid, what matches, which names a rule gives. */
import test from 'ava';
import { globProblem, hostMatches, ruleHosts } from '../../plugins/proxy-config/targets/globs.ts';

test('valid globs: labels of letters, digits, -, _ and *, ** only as a whole label', (t) => {
  for (const glob of [
    'cloud.example.com',
    '*.example.com',
    'app-*.example.com',
    '**.example.com',
    '**',
    '*',
    'A_B.Example.COM',
  ])
    t.is(globProblem(glob), null, glob);
  for (const glob of [
    '',
    '.example.com',
    'example.com.',
    'a..b',
    'a b.com',
    'a**.com',
    '***.com',
    'cloud.example.com/x',
    'ä.com',
    'x'.repeat(254),
  ])
    t.truthy(globProblem(glob), glob);
});

test('* stays inside one label, ** spans labels, case and a trailing dot do not matter', (t) => {
  t.true(hostMatches('a.example.com', ['*.example.com']));
  t.false(hostMatches('a.b.example.com', ['*.example.com']));
  t.false(hostMatches('example.com', ['*.example.com']));
  t.true(hostMatches('a.b.example.com', ['**.example.com']));
  t.true(hostMatches('a.example.com', ['**.example.com']));
  t.false(hostMatches('example.com', ['**.example.com']));
  t.true(hostMatches('App-Blue.Example.com.', ['app-*.example.com']));
  t.false(hostMatches('web.example.com', ['app-*.example.com']));
  t.true(hostMatches('anything.at.all', ['**']));
  t.true(hostMatches('localhost', ['*']));
  t.false(hostMatches('a.b', ['*']));
  t.false(hostMatches('cloudXexample.com', ['cloud.example.com']), 'a dot is a dot, not "any character"');
  t.false(hostMatches('a.example.com', []));
});

test('rule names come from Host and HostSNI (v2 lists too); HostSNI(`*`) and HostRegexp give none', (t) => {
  t.deepEqual(ruleHosts('Host(`cloud.example.com`) && PathPrefix(`/x`)'), ['cloud.example.com']);
  t.deepEqual(ruleHosts('Host(`a.com`, `b.com`) || Host("c.com")'), ['a.com', 'b.com', 'c.com']);
  t.deepEqual(ruleHosts('HostSNI(`db.example.com`)'), ['db.example.com']);
  t.deepEqual(ruleHosts('HostSNI(`*`)'), []);
  t.deepEqual(ruleHosts('HostRegexp(`^.+\\.example\\.com$`)'), []);
  t.deepEqual(ruleHosts(undefined), []);
});
