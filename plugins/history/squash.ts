/**
 * Bounded history (API.md §4.24 `history.max_commits`): the commits older than the newest `keep`
 * are squashed into one root commit holding their last tree; the kept commits are replayed on it
 * unchanged (trees, authors, dates, messages) by `git fast-export --no-data | git fast-import`, so
 * no blob is read or written again: squashing 20,000 commits takes seconds, not one process per
 * commit. The old objects go with the next `git gc`.
 */
import { REF, type Git } from './git.ts';

export async function squash(
  git: Git,
  keep: number,
): Promise<{ head: string; commits: number; squashed: number } | null> {
  const total = await git.count();
  if (total <= keep + 1) return null;
  // the newest commit to fold in: everything up to it becomes one root commit with its tree
  const base = (await git.text(['rev-list', `--skip=${keep}`, '--max-count=1', REF])).trim();
  const when = (await git.text(['show', '-s', '--format=%at', base])).trim();
  const squashed = total - keep;
  const root = (
    await git.text(['commit-tree', `${base}^{tree}`, '-m', `squashed history: ${squashed} older commits`], {
      env: {
        GIT_AUTHOR_NAME: 'stack-manager',
        GIT_AUTHOR_EMAIL: 'squash@stack-manager',
        GIT_AUTHOR_DATE: `${when} +0000`,
        GIT_COMMITTER_NAME: 'Stack Manager',
        GIT_COMMITTER_EMAIL: 'history@stack-manager',
      },
    })
  ).trim();
  const exported = await git.run([
    'fast-export',
    '--no-data',
    '--reference-excluded-parents',
    '--signed-tags=strip',
    `${base}..${REF}`,
  ]);
  // the first kept commit's parent is `base`: graft it onto the new root instead
  const stream = exported.stdout.toString('utf8').replace(new RegExp(`^from ${base}$`, 'm'), `from ${root}`);
  await git.run(['fast-import', '--quiet', '--force', '--done'], { input: `${stream}done\n` });
  const head = (await git.text(['rev-parse', REF])).trim();
  // old commits unreachable now: let gc drop them in the background of git's own heuristics
  await git.run(['reflog', 'expire', '--expire=now', '--all']).catch(() => undefined);
  await git.run(['gc', '--auto', '--quiet']).catch(() => undefined);
  return { head, commits: keep + 1, squashed };
}
