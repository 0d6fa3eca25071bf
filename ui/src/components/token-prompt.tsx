/** Paste-once token form: the token goes to sessionStorage and is sent as Bearer from then on. */
import { useState } from 'preact/hooks';
import { useSession } from '../lib/session';

export function TokenPrompt({ reason }: { reason: string }) {
  const { session, login } = useSession();
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <section class="card token-prompt">
      <h1>Token needed</h1>
      <p>{reason}</p>
      <p class="muted small">
        Create one with <code>POST /api/auth/tokens</code> or use the first-start admin token in <code>data/auth/initial-admin-token</code>. It is kept only in
        this tab (session storage).
      </p>
      {session.tokenProblem && (
        <div class="error-box" role="alert">
          The token was refused: {session.tokenProblem}
        </div>
      )}
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          await login(value);
          setBusy(false);
        }}
      >
        <label class="field">
          <span class="field-label">API token</span>
          <input type="password" name="token" autoComplete="off" placeholder="smk_…" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Use token
        </button>
      </form>
    </section>
  );
}
