/**
 * What the UI may do: the auth mode and the caller's role, learned from the API itself.
 * With a token: GET /api/auth/whoami. Without: a configuration read tells `ops`/`off` (open) from
 * `all` (401); whether operation screens are open is learned when one is opened (whoami → 401 asks for a token).
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { api, ApiError, unwrap } from '../api/client';
import type { WhoAmI } from '../api/types';
import { currentToken, setToken } from './token';

export type Role = WhoAmI['role'];
export interface Session {
  /** `unknown` until a token or an operation screen tells ops from off. */
  mode: WhoAmI['auth_mode'] | 'unknown';
  /** null: no token (anonymous); configuration screens may still be open. */
  role: Role | null;
  name: string | null;
  /** Configuration routes answer without a token (ops or off). */
  configOpen: boolean;
  /** Operation routes answer (off mode, or a token). */
  opsOpen: boolean;
  /** Why the last token was refused, shown on the token prompt. */
  tokenProblem: string | null;
}

export async function probeSession(): Promise<Session> {
  const token = currentToken();
  if (token) {
    const result = await api.GET('/api/auth/whoami');
    if (result.response.ok && result.data) {
      const who = result.data;
      return {
        mode: who.auth_mode,
        role: who.role,
        name: who.name,
        configOpen: true,
        opsOpen: true,
        tokenProblem: null,
      };
    }
    setToken(null);
    const problem = result.error?.message ?? `HTTP ${result.response.status}`;
    const anonymous = await probeSession();
    return { ...anonymous, tokenProblem: problem };
  }
  // a configuration read that answers 200 whatever the data sources (not /active: 404 in mode none)
  const probe = await api.GET('/api/datasource', { params: { query: { page_size: 1 } } });
  if (probe.response.status === 401)
    return { mode: 'all', role: null, name: null, configOpen: false, opsOpen: false, tokenProblem: null };
  return { mode: 'unknown', role: null, name: null, configOpen: true, opsOpen: false, tokenProblem: null };
}

/** Without a token: does the server open operation routes to anyone (auth.mode off)? */
export async function probeOperations(session: Session): Promise<Session> {
  try {
    const who = await unwrap(api.GET('/api/auth/whoami'));
    return { ...session, mode: who.auth_mode, role: who.role, opsOpen: true };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401)
      return { ...session, mode: session.mode === 'unknown' ? 'ops' : session.mode, opsOpen: false };
    throw err;
  }
}

export interface SessionContextValue {
  session: Session;
  /** Saves a token (or null to forget it) and probes again. */
  login(token: string | null): Promise<void>;
  update(session: Session): void;
}

export const SessionContext = createContext<SessionContextValue>(null as never);

export function useSession(): SessionContextValue {
  return useContext(SessionContext);
}

/** May the caller change things? Anonymous in ops/off mode may change configuration; a viewer never. */
export function canWrite(session: Session): boolean {
  return session.role === null ? session.configOpen : session.role !== 'viewer';
}
