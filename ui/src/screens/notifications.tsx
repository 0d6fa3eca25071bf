/**
 * Notifications (API.md §4.21): the channels (add, test, enable/disable, delete; secrets are never
 * shown) and the delivery history with its status filter.
 */
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { Body, Reply } from '../api/types';
import { Badge, ErrorBox, Field, FieldError, Loading, PageHeader, StatusBadge, when } from '../components/ui';
import { DataTable } from '../components/data-table';
import { HistoryLink } from '../components/history-link';
import { useAsync } from '../lib/use-async';

type Channel = Reply<'/api/notifications/channels', 'get'>[number];
type ChannelBody = Body<'/api/notifications/channels', 'post'>;
type HistoryEntry = Reply<'/api/notifications/history', 'get'>[number];
type TestResult = Reply<'/api/notifications/channels/{id}/test', 'post'>;
type ChannelType = ChannelBody['type'];

/** The config fields each type asks for: [name, label, input type]. Lists are comma-separated. */
const FIELDS: Record<ChannelType, [string, string, string][]> = {
  webhook: [
    ['url', 'URL', 'url'],
    ['secret', 'HMAC secret (optional)', 'password'],
  ],
  ntfy: [
    ['url', 'Server URL', 'url'],
    ['topic', 'Topic', 'text'],
    ['token', 'Access token (optional)', 'password'],
  ],
  gotify: [
    ['url', 'Server URL', 'url'],
    ['token', 'Application token', 'password'],
  ],
  discord: [['webhook_url', 'Webhook URL', 'password']],
  slack: [['webhook_url', 'Webhook URL', 'password']],
  telegram: [
    ['bot_token', 'Bot token', 'password'],
    ['chat_id', 'Chat id', 'text'],
    ['api_url', 'API URL (optional)', 'url'],
  ],
  email: [
    ['host', 'SMTP host', 'text'],
    ['port', 'Port', 'number'],
    ['security', 'Security (tls, starttls, none)', 'text'],
    ['username', 'Username (optional)', 'text'],
    ['password', 'Password (optional)', 'password'],
    ['from', 'From', 'email'],
    ['to', 'To (comma-separated)', 'text'],
  ],
};
const TYPES = Object.keys(FIELDS) as ChannelType[];
const SEVERITIES = ['info', 'warning', 'error'] as const;
const SCHEDULES = ['immediate', 'hourly', 'daily'] as const;
const CATEGORIES = ['proxy', 'certs', 'security', 'containers', 'backups', 'config', 'system'] as const;
type Category = (typeof CATEGORIES)[number];
const STATUSES = ['', 'sent', 'queued', 'failed', 'suppressed'] as const;

/** The form's text values → the channel's config (empty optional fields left out, numbers and lists typed). */
function configOf(type: ChannelType, values: Record<string, string>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [name] of FIELDS[type]) {
    const value = (values[name] ?? '').trim();
    if (value === '') continue;
    if (name === 'port') config[name] = Number(value);
    else if (name === 'to') config[name] = value.split(',').map((part) => part.trim()).filter(Boolean);
    else config[name] = value;
  }
  return config;
}

export default function Notifications() {
  const channels = useAsync(() => unwrap(api.GET('/api/notifications/channels')), []);
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('');
  const history = useAsync(
    () => unwrap(api.GET('/api/notifications/history', { params: { query: { page_size: 100, ...(status ? { status } : {}) } } })),
    [status],
  );
  const [draft, setDraft] = useState({
    name: '',
    type: 'webhook' as ChannelType,
    min_severity: 'warning' as (typeof SEVERITIES)[number],
    schedule: 'immediate' as (typeof SCHEDULES)[number],
    categories: [...CATEGORIES] as Category[],
    quiet_start: '',
    quiet_end: '',
    values: {} as Record<string, string>,
  });
  const [error, setError] = useState<unknown>(null);
  const [tested, setTested] = useState<{ name: string; result: TestResult } | null>(null);
  const act = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      channels.reload();
      history.reload();
    } catch (err) {
      setError(err);
    }
  };
  const test = (channel: Channel) =>
    act(async () => {
      setTested(null);
      const result = await unwrap(api.POST('/api/notifications/channels/{id}/test', { params: { path: { id: channel.id } } }));
      setTested({ name: channel.name, result });
    });
  const toggle = (channel: Channel) =>
    act(() =>
      unwrap(
        api.PUT('/api/notifications/channels/{id}', {
          params: { path: { id: channel.id } },
          // the masked secrets are sent back as they are: the server keeps the stored values
          body: { name: channel.name, type: channel.type, enabled: !channel.enabled, categories: channel.categories as ChannelBody['categories'], min_severity: channel.min_severity, schedule: channel.schedule, quiet_hours: channel.quiet_hours, max_per_minute: channel.max_per_minute, config: channel.config },
        }),
      ),
    );

  return (
    <>
      <PageHeader title="Notifications">
        <button type="button" onClick={() => history.reload()}>
          Refresh history
        </button>
      </PageHeader>
      <ErrorBox error={error} />
      {tested && (
        <div class={tested.result.delivered ? 'success' : 'error-box'} role="status" id="test-result">
          {tested.result.delivered ? `Test message delivered through ${tested.name} in ${tested.result.latency_ms} ms.` : `Test through ${tested.name} failed: ${tested.result.error}`}
        </div>
      )}
      <form
        class="card"
        id="channel-create"
        onSubmit={(event) => {
          event.preventDefault();
          void act(async () => {
            const quiet_hours = draft.quiet_start && draft.quiet_end ? { start: draft.quiet_start, end: draft.quiet_end, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone } : null;
            await unwrap(
              api.POST('/api/notifications/channels', {
                body: { name: draft.name, type: draft.type, min_severity: draft.min_severity, schedule: draft.schedule, categories: draft.categories, quiet_hours, config: configOf(draft.type, draft.values) },
              }),
            );
            setDraft({ ...draft, name: '', values: {}, quiet_start: '', quiet_end: '' });
          });
        }}
      >
        <h2>Add a channel</h2>
        <div class="form-row">
          <Field label="Name">
            <input name="channel_name" value={draft.name} required onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
            <FieldError error={error} pointer="/name" />
          </Field>
          <Field label="Type">
            <select name="channel_type" value={draft.type} onChange={(e) => setDraft({ ...draft, type: e.currentTarget.value as ChannelType, values: {} })}>
              {TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Minimum severity">
            <select name="min_severity" value={draft.min_severity} onChange={(e) => setDraft({ ...draft, min_severity: e.currentTarget.value as (typeof SEVERITIES)[number] })}>
              {SEVERITIES.map((severity) => (
                <option key={severity} value={severity}>
                  {severity}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Schedule">
            <select name="schedule" value={draft.schedule} onChange={(e) => setDraft({ ...draft, schedule: e.currentTarget.value as (typeof SCHEDULES)[number] })}>
              {SCHEDULES.map((schedule) => (
                <option key={schedule} value={schedule}>
                  {schedule === 'immediate' ? 'immediate' : `${schedule} digest`}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Quiet hours from (errors still go out)">
            <input name="quiet_start" type="time" value={draft.quiet_start} onInput={(e) => setDraft({ ...draft, quiet_start: e.currentTarget.value })} />
          </Field>
          <Field label="Quiet hours until">
            <input name="quiet_end" type="time" value={draft.quiet_end} onInput={(e) => setDraft({ ...draft, quiet_end: e.currentTarget.value })} />
            <FieldError error={error} pointer="/quiet_hours" />
          </Field>
        </div>
        <fieldset class="form-row" id="channel-categories">
          <legend>Categories</legend>
          {CATEGORIES.map((category) => (
            <label key={category}>
              <input
                type="checkbox"
                name={`category_${category}`}
                checked={draft.categories.includes(category)}
                onChange={(e) => setDraft({ ...draft, categories: e.currentTarget.checked ? [...draft.categories, category] : draft.categories.filter((c) => c !== category) })}
              />{' '}
              {category}
            </label>
          ))}
        </fieldset>
        <div class="form-row">
          {FIELDS[draft.type].map(([name, label, type]) => (
            <Field key={`${draft.type}-${name}`} label={label}>
              <input name={`config_${name}`} type={type} autoComplete="off" value={draft.values[name] ?? ''} onInput={(e) => setDraft({ ...draft, values: { ...draft.values, [name]: e.currentTarget.value } })} />
              <FieldError error={error} pointer={`/config/${name}`} />
            </Field>
          ))}
        </div>
        <button type="submit" class="primary">
          Add channel
        </button>
      </form>

      <h2>Channels</h2>
      <ErrorBox error={channels.error} />
      <Loading when={channels.loading && !channels.data} />
      {channels.data && (
        <DataTable
          id="channel-list"
          rows={channels.data}
          rowKey={(c) => c.id}
          rowProps={(c) => ({ 'data-channel': c.id })}
          empty="No channel yet: nothing is sent."
          columns={[
            { title: 'Name', cell: (c) => c.name },
            { title: 'Type', cell: (c) => c.type },
            { title: 'State', cell: (c) => (c.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="neutral">disabled</Badge>) },
            { title: 'Minimum severity', cell: (c) => c.min_severity },
            { title: 'Schedule', cell: (c) => c.schedule },
            { title: 'Categories', cell: (c) => c.categories.join(', ') },
            {
              title: '',
              class: 'actions',
              cell: (c) => (
                <>
                  <HistoryLink path={`notifications/${c.id}`} />{' '}
                  <button type="button" onClick={() => void test(c)}>
                    Test
                  </button>{' '}
                  <button type="button" onClick={() => void toggle(c)}>
                    {c.enabled ? 'Disable' : 'Enable'}
                  </button>{' '}
                  <button type="button" class="danger" onClick={() => confirm(`Delete channel ${c.name}? Its queued messages are reported failed.`) && act(() => unwrap(api.DELETE('/api/notifications/channels/{id}', { params: { path: { id: c.id } } })))}>
                    Delete
                  </button>
                </>
              ),
            },
          ]}
        />
      )}

      <h2>History</h2>
      <Field label="Status">
        <select name="history_status" value={status} onChange={(e) => setStatus(e.currentTarget.value as (typeof STATUSES)[number])}>
          {STATUSES.map((value) => (
            <option key={value} value={value}>
              {value || 'all'}
            </option>
          ))}
        </select>
      </Field>
      <ErrorBox error={history.error} />
      {history.data && (
        <DataTable<HistoryEntry>
          id="notification-history"
          rows={history.data}
          rowKey={(h) => h.id}
          rowProps={(h) => ({ 'data-notification': h.id, 'data-status': h.status })}
          empty="Nothing sent yet."
          columns={[
            { title: 'When', cell: (h) => when(h.at) },
            { title: 'Channel', cell: (h) => h.channel },
            { title: 'Category', cell: (h) => h.category },
            { title: 'Severity', cell: (h) => <Badge tone={h.severity === 'error' ? 'bad' : h.severity === 'warning' ? 'warn' : 'neutral'}>{h.severity}</Badge> },
            { title: 'Title', cell: (h) => h.title },
            { title: 'Status', cell: (h) => <StatusBadge status={h.status} /> },
            { title: 'Attempts', cell: (h) => h.attempts },
            { title: 'Last error', cell: (h) => h.last_error ?? '' },
          ]}
        />
      )}
    </>
  );
}
