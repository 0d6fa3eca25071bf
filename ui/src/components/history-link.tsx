/**
 * The link from an object to its config history timeline (API.md §4.24): `/history?path=<path>`,
 * `path` relative to the data dir — an object without extension (`resources/<id>`), a file
 * (`datasources.yaml`) or a collection directory (`mtls`).
 */
import type { ComponentChildren } from 'preact';

export function HistoryLink({ path, children = 'History' }: { path: string; children?: ComponentChildren }) {
  return (
    <a
      class="button"
      href={`/history?path=${path.split('/').map(encodeURIComponent).join('/')}`}
      data-history-link={path}
    >
      {children}
    </a>
  );
}
