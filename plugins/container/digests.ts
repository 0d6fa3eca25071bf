/** Image reference helpers for the update check: which RepoDigests entry belongs to a reference. */

/** `docker.io/library/traefik` and `traefik` name the same repository. */
function familiar(repository: string): string {
  return repository.replace(/^(docker\.io|index\.docker\.io|registry-1\.docker\.io)\//, '').replace(/^library\//, '');
}

/** The repository of a reference, without tag or digest (`traefik:v3` → `traefik`, `host:5000/x:1` → `host:5000/x`). */
export function repositoryOf(reference: string): string {
  const withoutDigest = reference.split('@')[0];
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  return familiar(colon > slash ? withoutDigest.slice(0, colon) : withoutDigest);
}

/** The digest a reference pins (`name@sha256:…`), else null. */
export const pinnedDigest = (reference: string): string | null =>
  reference.match(/@(sha256:[0-9a-f]{64})$/)?.[1] ?? null;

/** The digest of the `RepoDigests` entry of the reference's repository (the first entry when none matches). */
export function currentDigest(reference: string, repoDigests: string[] | undefined): string | null {
  const pinned = pinnedDigest(reference);
  if (pinned) return pinned;
  if (!repoDigests || repoDigests.length === 0) return null;
  const repository = repositoryOf(reference);
  const entry = repoDigests.find((d) => familiar(d.split('@')[0]) === repository) ?? repoDigests[0];
  return entry.split('@')[1] ?? null;
}
