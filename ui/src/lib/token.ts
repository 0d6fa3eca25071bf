/** The API token pasted by the operator, kept in sessionStorage (gone when the tab closes). */
const KEY = 'stack-manager.token';

export function currentToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  if (token) sessionStorage.setItem(KEY, token.trim());
  else sessionStorage.removeItem(KEY);
}
