/** Light, dark or the system's choice; remembered in localStorage and applied as <html data-theme>. */
export type Theme = 'system' | 'light' | 'dark';
const KEY = 'stack-manager.theme';

export function storedTheme(): Theme {
  const value = localStorage.getItem(KEY);
  return value === 'light' || value === 'dark' ? value : 'system';
}

export function applyTheme(theme: Theme): void {
  if (theme === 'system') {
    localStorage.removeItem(KEY);
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem(KEY, theme);
    document.documentElement.dataset.theme = theme;
  }
}
