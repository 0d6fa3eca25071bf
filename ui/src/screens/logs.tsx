/** Logs: live tail per service over the WebSocket (pause, filter) and access-log statistics with charts. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { AccessStats } from '../api/types';
import { ErrorBox, Field, Loading, PageHeader, StatusBadge, Tabs, bytes } from '../components/ui';
import { currentToken } from '../lib/token';
import { useAsync } from '../lib/use-async';

type Service = 'proxy' | 'secengine' | 'tunnelapp' | 'tunnelgw';
const SERVICES: [Service, string][] = [
  ['proxy', 'Traefik'],
  ['secengine', 'CrowdSec'],
  ['tunnelapp', 'Newt'],
  ['tunnelgw', 'Gerbil'],
];
interface Line {
  ts: string;
  stream: string;
  line: string;
  truncated: boolean;
}
const KEEP = 2000;

function LiveTail({ service }: { service: Service }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [paused, setPaused] = useState(false);
  const [filter, setFilter] = useState('');
  const [state, setState] = useState('connecting');
  const [message, setMessage] = useState<string | null>(null);
  const [dropped, setDropped] = useState(0);
  const [openError, setOpenError] = useState<unknown>(null);
  const buffer = useRef<Line[]>([]);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const view = useRef<HTMLPreElement>(null);

  useEffect(() => {
    setLines([]);
    buffer.current = [];
    setMessage(null);
    setState('connecting');
    setOpenError(null);
    let socket: WebSocket | null = null;
    let closed = false;
    let flush: ReturnType<typeof setTimeout> | undefined;
    // a refused WebSocket handshake carries no message: one plain read first gets the server's (404 missing container, 502 Docker)
    unwrap(api.GET('/api/logs/{service}', { params: { path: { service }, query: { tail: 1, stream: 'all' } } })).then(
      () => {
        if (!closed) socket = open();
      },
      (err: unknown) => {
        setOpenError(err);
        setState('offline');
      },
    );
    const open = () => {
    const token = currentToken();
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/api/logs/stream/${service}?tail=100${token ? `&access_token=${encodeURIComponent(token)}` : ''}`);
    const schedule = () => {
      if (flush || pausedRef.current) return;
      flush = setTimeout(() => {
        flush = undefined;
        // paused in the meantime: the view stays as it was (Resume shows what arrived)
        if (!pausedRef.current) setLines(buffer.current.slice(-KEEP));
      }, 100);
    };
    socket.onopen = () => setState('live');
    socket.onmessage = (event) => {
      const data = JSON.parse(String(event.data));
      if (data.type === 'log') {
        buffer.current.push(data);
        if (buffer.current.length > KEEP * 2) buffer.current = buffer.current.slice(-KEEP);
        schedule();
      } else if (data.type === 'dropped') setDropped((n) => n + data.count);
      else if (data.type === 'status') setMessage(`container ${data.state}`);
      else if (data.type === 'error') setMessage(data.message);
    };
    socket.onclose = (event) => {
      setState('offline');
      if (event.code !== 1000 && event.reason) setMessage(event.reason);
      else if (event.code === 1006) setMessage('the log stream closed unexpectedly');
    };
    return socket;
    };
    return () => {
      closed = true;
      clearTimeout(flush);
      socket?.close(1000);
    };
  }, [service]);

  useEffect(() => {
    if (!paused) setLines(buffer.current.slice(-KEEP));
  }, [paused]);
  useEffect(() => {
    if (!paused && view.current) view.current.scrollTop = view.current.scrollHeight;
  }, [lines]);

  const needle = filter.toLowerCase();
  const shown = needle ? lines.filter((l) => l.line.toLowerCase().includes(needle)) : lines;
  return (
    <section>
      <div class="toolbar">
        <StatusBadge status={state} />
        <button
          type="button"
          aria-pressed={paused}
          onClick={() => {
            // the ref first: a flush already scheduled must see the pause at once, not after the next render
            pausedRef.current = !paused;
            setPaused(!paused);
          }}
        >
          {paused ? 'Resume' : 'Pause'}
        </button>
        <Field label="Filter">
          <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        </Field>
        <span class="muted small">
          {shown.length} lines{dropped ? ` · ${dropped} dropped by the server (slow client)` : ''}
        </span>
      </div>
      <ErrorBox error={openError} title="Log stream" />
      {message && <div class="notice">{message}</div>}
      <pre class="log-view" ref={view} aria-live="off" id="log-view">
        {shown.map((l, index) => (
          <div key={index} class={l.stream === 'stderr' ? 'stderr' : ''}>
            <span class="muted">{l.ts.slice(11, 23)} </span>
            {l.line}
            {l.truncated && ' …'}
          </div>
        ))}
      </pre>
    </section>
  );
}

/** A small horizontal bar list (no chart library needed for counts). */
function Bars({ title, items }: { title: string; items: { value: string; count: number }[] }) {
  const max = Math.max(1, ...items.map((i) => i.count));
  return (
    <div class="card">
      <h3>{title}</h3>
      {items.length === 0 && <p class="muted">none</p>}
      {items.map((item) => (
        <div key={item.value} class="small" style="margin-bottom:4px">
          <div style="display:flex;justify-content:space-between;gap:8px">
            <code style="overflow:hidden;text-overflow:ellipsis;white-space:nowrap">{item.value}</code>
            <span>{item.count}</span>
          </div>
          <div class="progress">
            <span style={{ width: `${(item.count / max) * 100}%` }} />
          </div>
        </div>
      ))}
    </div>
  );
}

/** Requests per minute on uPlot, loaded with this chart only. */
function RequestsChart({ points }: { points: { minute: string; count: number }[] }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let chart: { destroy(): void } | null = null;
    let cancelled = false;
    Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([{ default: UPlot }]) => {
      if (cancelled || !host.current) return;
      const styles = getComputedStyle(document.documentElement);
      const stroke = styles.getPropertyValue('--accent').trim() || '#1f6feb';
      const axis = { stroke: styles.getPropertyValue('--muted').trim(), grid: { stroke: styles.getPropertyValue('--border').trim() } };
      const width = Math.max(280, host.current.clientWidth);
      chart = new UPlot(
        { width, height: 220, series: [{}, { label: 'requests/min', stroke, fill: stroke + '33' }], axes: [axis, axis], legend: { show: false } },
        [points.map((p) => Date.parse(p.minute) / 1000), points.map((p) => p.count)],
        host.current,
      );
    });
    return () => {
      cancelled = true;
      chart?.destroy();
    };
  }, [points]);
  return <div class="chart" ref={host} aria-label="requests per minute" />;
}

function AccessStatistics() {
  const [since, setSince] = useState('24h');
  const stats = useAsync(() => unwrap(api.GET('/api/logs/proxy/advanced', { params: { query: { since, top: 10 } } })), [since]);
  const s: AccessStats | undefined = stats.data;
  const toItems = (map: Record<string, number>) => Object.entries(map).map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count);
  return (
    <section>
      <div class="toolbar">
        <Field label="Window">
          <select value={since} onChange={(e) => setSince(e.currentTarget.value)}>
            <option value="1h">last hour</option>
            <option value="24h">last 24 h</option>
            <option value="7d">last 7 days</option>
          </select>
        </Field>
        <button type="button" onClick={stats.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={stats.error} title="Access-log statistics" />
      <Loading when={stats.loading && !s} />
      {s && (
        <>
          <p class="muted small">
            {s.source} · {s.format} · {s.lines_read} lines read, {s.lines_skipped} skipped
          </p>
          <div class="grid">
            <div class="card">
              <div class="stat">{s.requests}</div>
              <div class="muted">requests</div>
            </div>
            <div class="card">
              <div class="stat">{(s.error_rate * 100).toFixed(1)}%</div>
              <div class="muted">errors (4xx+5xx)</div>
            </div>
            <div class="card">
              <div class="stat">{s.latency_ms.p95 ?? '–'} ms</div>
              <div class="muted">p95 latency (p50 {s.latency_ms.p50 ?? '–'}, p99 {s.latency_ms.p99 ?? '–'})</div>
            </div>
            <div class="card">
              <div class="stat">{bytes(s.bytes_sent)}</div>
              <div class="muted">sent</div>
            </div>
          </div>
          {s.requests_per_minute.length > 1 && (
            <div class="card">
              <h3>Requests per minute</h3>
              <RequestsChart points={s.requests_per_minute} />
            </div>
          )}
          <div class="grid">
            <Bars title="Status classes" items={toItems(s.status_classes as Record<string, number>)} />
            <Bars title="Methods" items={toItems(s.methods as Record<string, number>)} />
            <Bars title="Top hosts" items={s.top_hosts} />
            <Bars title="Top paths" items={s.top_paths} />
            <Bars title="Top IPs" items={s.top_ips} />
            <Bars title="Top routers" items={s.top_routers} />
          </div>
        </>
      )}
    </section>
  );
}

export default function Logs() {
  const [tab, setTab] = useState<'live' | 'stats'>('live');
  const [service, setService] = useState<Service>('proxy');
  return (
    <>
      <PageHeader title="Logs" />
      <Tabs
        tabs={[
          ['live', 'Live tail'],
          ['stats', 'Access-log statistics'],
        ]}
        current={tab}
        onChange={setTab}
      />
      {tab === 'live' && (
        <>
          <Tabs<Service> tabs={SERVICES} current={service} onChange={setService} />
          <LiveTail key={service} service={service} />
        </>
      )}
      {tab === 'stats' && <AccessStatistics />}
    </>
  );
}
