/**
 * Light, dark or the system's choice; the choice is remembered in localStorage and always applied
 * as <html data-theme="light|dark">, so styles.css holds each palette once. "System" is resolved
 * here from prefers-color-scheme and followed live when the system switches.
 */
export type Theme = 'system' | 'light' | 'dark';
const KEY = 'stack-manager.theme';

const systemDark = () => window.matchMedia('(prefers-color-scheme: dark)');
let followSystem: (() => void) | null = null;

export function storedTheme(): Theme {
  const value = localStorage.getItem(KEY);
  return value === 'light' || value === 'dark' ? value : 'system';
}

/** The palette a theme shows now. */
export function resolvedTheme(theme: Theme): 'light' | 'dark' {
  if (theme !== 'system') return theme;
  return systemDark().matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme): void {
  if (theme === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, theme);
  document.documentElement.dataset.theme = resolvedTheme(theme);
  if (followSystem) systemDark().removeEventListener('change', followSystem);
  followSystem = null;
  if (theme === 'system') {
    followSystem = () => {
      document.documentElement.dataset.theme = resolvedTheme('system');
    };
    systemDark().addEventListener('change', followSystem);
  }
}
