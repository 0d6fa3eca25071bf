/** The shell: navigation, theme switch, live indicator, token prompt, and the current screen. */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ROUTES, type RouteDef, type ScreenProps } from './routes';
import { matchPath, useLocation } from './lib/router';
import { SessionContext, probeOperations, probeSession, type Session } from './lib/session';
import { setToken } from './lib/token';
import { connectEvents, liveState, onLiveState } from './lib/events';
import { applyTheme, storedTheme, type Theme } from './lib/theme';
import { ErrorBox, StatusBadge } from './components/ui';
import { TokenPrompt } from './components/token-prompt';

const loaded = new Map<RouteDef, ComponentType<ScreenProps>>();

function findRoute(path: string): { route: RouteDef; params: Record<string, string> } | null {
  for (const route of ROUTES) {
    const params = matchPath(route.path, path);
    if (params) return { route, params };
  }
  return null;
}

/** Loads a screen's chunk on first visit and renders it. */
function Screen({ route, params }: { route: RouteDef; params: Record<string, string> }) {
  // set once the chunk is loaded: re-renders with `loaded` holding the screen
  const [, setComponent] = useState<ComponentType<ScreenProps> | undefined>(() => loaded.get(route));
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setComponent(() => loaded.get(route));
    if (loaded.has(route)) return;
    let live = true;
    route.load().then(
      (module) => {
        loaded.set(route, module.default);
        if (live) setComponent(() => module.default);
      },
      (err: unknown) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [route]);
  if (error) return <ErrorBox error={error} title="This screen could not be loaded" />;
  // the state may still hold the previous route's screen for one render after a navigation: that
  // screen must not render with this route's params (a detail page without its :id would fetch
  // /api/resources/{id} literally), so only the current route's own screen is rendered
  const Shown = loaded.get(route);
  if (!Shown) return <p class="muted">Loading…</p>;
  return <Shown params={params} />;
}

function LiveIndicator() {
  const [state, setState] = useState(liveState());
  useEffect(() => {
    // the stream may have opened between the first render and this effect: take its state now too
    setState(liveState());
    return onLiveState(setState);
  }, []);
  return (
    <span class="live" title="Updates from GET /api/events" data-live={state}>
      <StatusBadge status={state} />
    </span>
  );
}

function ThemeSwitch() {
  const [theme, setTheme] = useState<Theme>(storedTheme());
  return (
    <label class="theme-switch">
      <span class="sr-only">Theme</span>
      <select
        value={theme}
        aria-label="Theme"
        onChange={(event) => {
          const next = event.currentTarget.value as Theme;
          applyTheme(next);
          setTheme(next);
        }}
      >
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

export function App() {
  const { path } = useLocation();
  const [session, setSession] = useState<Session | null>(null);
  const [bootError, setBootError] = useState<unknown>(null);
  const [menuOpen, setMenuOpen] = useState(false);

  const refresh = async () => {
    try {
      const next = await probeSession();
      setSession(next);
      if (next.configOpen) connectEvents();
    } catch (err) {
      setBootError(err);
    }
  };
  useEffect(() => {
    void refresh();
  }, []);
  const found = findRoute(path);
  useEffect(() => {
    document.title = `${found?.route.title ?? 'Not found'} · Stack Manager`;
    setMenuOpen(false);
  }, [path]);
  // an operation screen opened without a token: ask the server whether it needs one (off mode does not)
  useEffect(() => {
    if (session && found && found.route.group !== 'config' && !session.opsOpen && session.mode === 'unknown') {
      probeOperations(session).then(setSession, setBootError);
    }
  }, [session, found?.route]);

  if (bootError) return <ErrorBox error={bootError} title="The API did not answer" />;
  if (!session) return <p class="muted boot">Connecting…</p>;

  const context = {
    session,
    update: setSession,
    login: async (token: string | null) => {
      setToken(token);
      await refresh();
    },
  };
  const needsToken = found && (found.route.group === 'config' ? !session.configOpen : !session.opsOpen) && session.mode !== 'unknown';
  const needsAdmin = found?.route.group === 'admin' && session.opsOpen && session.role !== 'admin';

  return (
    <SessionContext.Provider value={context}>
      <a href="#main" class="skip-link">
        Skip to content
      </a>
      <header class="topbar">
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <a href="/" class="brand">
          Stack Manager
        </a>
        <span class="spacer" />
        <LiveIndicator />
        <span class="who" data-role={session.role ?? 'anonymous'}>
          {session.role ? `${session.name ?? 'open access'} · ${session.role}` : 'no token'}
        </span>
        {session.role && session.name && (
          <button type="button" class="link-button" onClick={() => context.login(null)}>
            Forget token
          </button>
        )}
        <ThemeSwitch />
      </header>
      <div class="layout">
        <nav id="nav" class={menuOpen ? 'nav open' : 'nav'} aria-label="Screens">
          {ROUTES.filter((route) => route.nav).map((route) => (
            <a key={route.path} href={route.path} aria-current={found?.route === route ? 'page' : undefined} class={found?.route.path.startsWith(route.path) && (route.path !== '/' || found.route === route) ? 'active' : ''}>
              {route.title}
              {route.group !== 'config' && <span class="lock" title="needs an operations token in auth mode ops"> ·{route.group === 'admin' ? 'admin' : 'ops'}</span>}
            </a>
          ))}
        </nav>
        <main id="main" tabIndex={-1}>
          {!found && <ErrorBox error={new Error(`no screen at ${path}`)} title="Not found" />}
          {found && needsToken && <TokenPrompt reason={found.route.group === 'config' ? 'This server asks for a token for every screen (auth.mode all).' : 'Operation screens need a token (auth.mode ops).'} />}
          {found && !needsToken && needsAdmin && <ErrorBox error={new Error('Tokens can only be managed with an admin token.')} title="Admin only" />}
          {found && !needsToken && !needsAdmin && (session.mode !== 'unknown' || found.route.group === 'config') && <Screen route={found.route} params={found.params} />}
        </main>
      </div>
    </SessionContext.Provider>
  );
}
