/** Small building blocks shared by every screen: errors, loading, badges, dialogs, tabs. */
import { cloneElement, isValidElement, toChildArray, type ComponentChildren, type JSX } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { ApiError } from '../api/client';

/** Shows the server's `message` (and `details` per field) for an ApiError, else the error text. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const apiError = error instanceof ApiError ? error : null;
  const message = apiError ? apiError.message : error instanceof Error ? error.message : String(error);
  return (
    <div class="error-box" role="alert">
      <strong>{title ?? 'Error'}</strong>
      {apiError && <code class="error-id">{apiError.id}</code>} {message}
      {apiError && apiError.details.length > 0 && (
        <ul>
          {apiError.details.map((detail) => (
            <li key={detail.path + detail.message}>
              <code>{detail.path || '/'}</code> {detail.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Messages of an ApiError for one field (JSON Pointer prefix), to show next to the input. */
export function fieldErrors(error: unknown, pointer: string): string[] {
  if (!(error instanceof ApiError)) return [];
  return error.details.filter((d) => d.path === pointer || d.path.startsWith(pointer + '/')).map((d) => (d.path === pointer ? d.message : `${d.path.slice(pointer.length + 1)}: ${d.message}`));
}

export function FieldError({ error, pointer }: { error: unknown; pointer: string }) {
  const messages = fieldErrors(error, pointer);
  if (messages.length === 0) return null;
  return (
    <div class="field-error" role="alert">
      {messages.join('; ')}
    </div>
  );
}

export function Loading({ when }: { when: boolean }) {
  return when ? <p class="muted" aria-live="polite">Loading…</p> : null;
}

export function Badge({ tone, children }: { tone: 'ok' | 'warn' | 'bad' | 'neutral'; children: ComponentChildren }) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}

export function statusTone(status: string | null | undefined): 'ok' | 'warn' | 'bad' | 'neutral' {
  if (!status) return 'neutral';
  if (['ok', 'active', 'running', 'healthy', 'enabled', 'loaded', 'succeeded', 'live', 'installed'].includes(status)) return 'ok';
  if (['degraded', 'disabled', 'starting', 'paused', 'restarting', 'queued', 'configured', 'skipped', 'connecting'].includes(status)) return 'warn';
  if (['fail', 'error', 'exited', 'dead', 'missing', 'failed', 'unhealthy', 'offline', 'incompatible'].includes(status)) return 'bad';
  return 'neutral';
}

export function StatusBadge({ status }: { status: string | null | undefined }) {
  return <Badge tone={statusTone(status)}>{status ?? 'unknown'}</Badge>;
}

/** A modal <dialog>: focus moves in, Escape closes it. */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-label={title}>
      <h2>{title}</h2>
      {open && children}
    </dialog>
  );
}

export function Tabs<T extends string>({ tabs, current, onChange }: { tabs: [T, string][]; current: T; onChange: (tab: T) => void }) {
  return (
    <div class="tabs" role="tablist">
      {tabs.map(([key, label]) => (
        <button type="button" role="tab" aria-selected={current === key} class={current === key ? 'tab active' : 'tab'} onClick={() => onChange(key)} key={key}>
          {label}
        </button>
      ))}
    </div>
  );
}

/** A labelled control: the first child gets an id and a <label for> (its accessible name is exactly `label`). */
export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: ComponentChildren }) {
  const fallbackId = useId();
  const [control, ...rest] = toChildArray(children);
  const id = isValidElement(control) ? ((control.props as { id?: string }).id ?? fallbackId) : fallbackId;
  return (
    <div class="field">
      <label class="field-label" for={id}>
        {label}
      </label>
      {isValidElement(control) ? cloneElement(control, { id }) : control}
      {rest}
      {hint && <span class="muted small">{hint}</span>}
    </div>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="page-header">
      <h1>{title}</h1>
      <div class="actions">{children}</div>
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty muted">{children}</p>;
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

/** Formats ISO timestamps in the browser's locale, keeping null readable. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '–';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function bytes(n: number | null | undefined): string {
  if (n == null) return '–';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export type InputEvent = JSX.TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>;
export const valueOf = (event: InputEvent) => event.currentTarget.value;
