/**
 * The config history's §4.19 finding (API.md §4.24: push failures "in status and §4.19 findings"):
 * `history_push_failed` while the last push to `history.remote_url` failed, contributed to
 * GET /api/proxy-config/diagnosis through the live status' FindingRegistry.
 */
import type { Finding } from '../../model/live/types.ts';
import type { HistoryStatus } from './recorder.ts';

/** The finding of a failing push, or none; its id stays the same while the remote keeps failing. */
export function pushFindings(status: HistoryStatus): Finding[] {
  const remote = status.remote;
  if (!remote?.last_error) return [];
  return [
    {
      id: `history_push_failed:${remote.url}`,
      severity: 'warning',
      kind: 'history_push_failed',
      message: `Config history cannot be pushed to ${remote.url} (last attempt ${remote.last_error.at}): ${remote.last_error.message}`,
      resources: [],
      middlewares: [],
      fix: 'Make history.remote_url reachable and writable with history.remote_username/remote_password (see GET /api/history/status); commits are kept locally and pushed on the next retry.',
    },
  ];
}
