/**
 * Config history (API.md §4.24): the timeline of changes (who, when, which files; filter by path
 * and author), a change's unified diff per file (secrets appear as their hashes), and the restore of
 * chosen files — or the whole change — as they were after it, as one new change, after a confirmation.
 * `?path=middlewares/x.yaml` opens the timeline of one object (the "history" link of an object).
 */
import { useState } from 'preact/hooks';
import { api, toApiError, unwrap } from '../api/client';
import { DataTable } from '../components/data-table';
import { Dialog, ErrorBox, Field, Loading, PageHeader, when } from '../components/ui';
import { useLocation } from '../lib/router';
import { useAsync } from '../lib/use-async';

const PAGE_SIZE = 50;

/** One unified diff with added and removed lines marked. */
function DiffView({ diff }: { diff: string }) {
  if (!diff) return <p class="muted">no textual change</p>;
  return (
    <pre class="diff">
      {diff.split('\n').map((line, index) => {
        const kind = line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : line.startsWith('@@') ? 'hunk' : '';
        return (
          <span key={index} class={kind ? `diff-${kind}` : undefined}>
            {line}
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}

export default function History() {
  const { query } = useLocation();
  const [path, setPath] = useState(query.get('path') ?? '');
  const [author, setAuthor] = useState('');
  const [filter, setFilter] = useState({ path: query.get('path') ?? '', author: '' });
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<string | null>(null);
  const [chosen, setChosen] = useState<string[]>([]);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<{ restored: string[]; rev: string } | null>(null);
  const [refresh, setRefresh] = useState(0);

  const list = useAsync(async () => {
    const { data, error: failure, response } = await api.GET('/api/history', {
      params: { query: { page, page_size: PAGE_SIZE, ...(filter.path ? { path: filter.path } : {}), ...(filter.author ? { author: filter.author } : {}) } },
    });
    if (!response.ok || !data) throw toApiError(response.status, failure);
    return { rows: data, total: Number(response.headers.get('x-total-count') ?? data.length) };
  }, [page, filter.path, filter.author, refresh]);
  const commit = useAsync(async () => (selected ? unwrap(api.GET('/api/history/{rev}', { params: { path: { rev: selected } } })) : null), [selected]);

  const open = (rev: string) => {
    setSelected(rev);
    setChosen([]);
    setResult(null);
    setError(null);
  };
  /** Changes are committed within a second, off the request path: reload once the history has the new commit. */
  const awaitCommit = async () => {
    const before = list.data?.rows[0]?.rev;
    for (let i = 0; i < 40; i++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const status = await api.GET('/api/history/status');
      if (status.data && status.data.pending === 0 && status.data.head && status.data.head !== before) break;
    }
    setRefresh((n) => n + 1);
  };
  const restore = async () => {
    if (!selected) return;
    setError(null);
    try {
      const done = await unwrap(
        api.POST('/api/history/{rev}/restore', { params: { path: { rev: selected } }, body: chosen.length > 0 ? { paths: chosen } : {} }),
      );
      setResult(done);
      setConfirming(false);
      void awaitCommit();
    } catch (err) {
      setError(err);
      setConfirming(false);
    }
  };

  const pages = list.data ? Math.max(1, Math.ceil(list.data.total / PAGE_SIZE)) : 1;
  const files = commit.data?.files ?? [];
  const targets = chosen.length > 0 ? chosen : files.map((file) => file.path);
  return (
    <>
      <PageHeader title="History">
        <button type="button" onClick={() => setRefresh((n) => n + 1)}>
          Refresh
        </button>
      </PageHeader>
      <p class="muted">Every change of the data dir, through the API, by hand, by discovery or by a restore, as a commit of data/.history. Secrets show as redacted hashes.</p>
      <form
        class="card form-row"
        id="history-filter"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(1);
          setFilter({ path: path.trim(), author: author.trim() });
        }}
      >
        <Field label="Path (file or collection)">
          <input name="path" value={path} placeholder="middlewares/auth.yaml" onInput={(e) => setPath(e.currentTarget.value)} />
        </Field>
        <Field label="Author">
          <input name="author" value={author} placeholder="gitops, discovery, a token name" onInput={(e) => setAuthor(e.currentTarget.value)} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <DataTable
            id="history-list"
            rows={list.data.rows}
            rowKey={(c) => c.rev}
            rowProps={(c) => ({ 'data-rev': c.rev, class: c.rev === selected ? 'selected' : undefined })}
            empty="No changes recorded yet."
            columns={[
              { title: 'When', cell: (c) => when(c.at) },
              { title: 'Author', cell: (c) => <span data-author>{c.author}</span> },
              { title: 'Source', cell: (c) => c.source },
              { title: 'Change', cell: (c) => <span class="mono">{c.message.split('\n')[0]}</span> },
              { title: 'Files', cell: (c) => (c.files.length <= 2 ? c.files.map((f) => `${f.path} (${f.change})`).join(', ') : `${c.files.length} files`) },
              {
                title: '',
                class: 'actions',
                cell: (c) => (
                  <button type="button" onClick={() => open(c.rev)}>
                    Show diff
                  </button>
                ),
              },
            ]}
          />
          <p>
            {list.data.total} change(s){' '}
            {pages > 1 && (
              <>
                — page {page} of {pages}{' '}
                <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                  Newer
                </button>{' '}
                <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
                  Older
                </button>
              </>
            )}
          </p>
        </>
      )}
      {selected && (
        <section class="card" id="history-commit" data-rev={selected}>
          <ErrorBox error={commit.error} />
          <Loading when={commit.loading && !commit.data} />
          {commit.data && (
            <>
              <h2>
                <span class="mono">{commit.data.rev.slice(0, 12)}</span> by {commit.data.author}, {when(commit.data.at)}
              </h2>
              <pre class="mono">{commit.data.message}</pre>
              {files.map((file) => (
                <div class="diff-file" key={file.path} data-file={file.path}>
                  <label>
                    <input
                      type="checkbox"
                      checked={chosen.includes(file.path)}
                      onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, file.path] : chosen.filter((p) => p !== file.path))}
                    />{' '}
                    <strong>{file.path}</strong> ({file.change})
                  </label>
                  <DiffView diff={file.diff} />
                </div>
              ))}
              <ErrorBox error={error} title="Nothing was restored" />
              {result && (
                <div class="success" role="status" id="restore-result">
                  Restored {result.restored.join(', ')} as of {result.rev.slice(0, 12)}: one new change.
                </div>
              )}
              <button type="button" class="primary" onClick={() => setConfirming(true)}>
                {chosen.length > 0 ? `Restore ${chosen.length} selected file(s)…` : 'Restore this change…'}
              </button>
            </>
          )}
        </section>
      )}
      <Dialog title="Restore from history" open={confirming} onClose={() => setConfirming(false)}>
        <p>
          These files are written back as they were after {selected?.slice(0, 12)}, checked like hand edits first (nothing is written if one no longer validates):
        </p>
        <ul>
          {targets.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
        <button type="button" class="primary" onClick={() => void restore()}>
          Restore
        </button>{' '}
        <button type="button" onClick={() => setConfirming(false)}>
          Cancel
        </button>
      </Dialog>
    </>
  );
}
