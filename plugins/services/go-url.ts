/**
 * The errors of Go's url.Parse, which Traefik runs on each server `url` of an HTTP load balancer:
 * one it cannot parse makes Traefik 3.7.15 disable the service and every router on it (`error
 * parsing server URL 127.0.0.1:80: parse "127.0.0.1:80": first path segment in URL cannot contain
 * colon`). Follows net/url's parser for the errors it reports; 48 URLs agree with the binary.
 */
import { isIP } from 'node:net';

const HOST_OK = /[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]/;
const USERINFO = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/;
const PORT = /^(:[0-9]*)?$/;
const ESCAPE = /%(?![0-9A-Fa-f]{2})/;

const badEscape = (s: string): string | null => {
  const at = s.search(ESCAPE);
  return at < 0 ? null : `invalid URL escape "${s.slice(at, at + 3)}"`;
};

function hostError(host: string): string | null {
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) return "missing ']' in host";
    const port = host.slice(end + 1);
    if (!PORT.test(port)) return `invalid port "${port}" after host`;
    const inside = host.slice(1, end);
    const escape = badEscape(inside);
    if (escape) return escape;
    const zone = inside.indexOf('%25');
    const addr = zone < 0 ? inside : inside.slice(0, zone);
    if (addr.includes('%') || !isIP(addr)) return `invalid host: ParseAddr("${addr}"): unable to parse IP`;
    return null;
  }
  const colon = host.indexOf(':');
  if (colon >= 0 && !PORT.test(host.slice(colon))) return `invalid port "${host.slice(colon)}" after host`;
  for (let i = 0; i < host.length; i++) {
    const c = host[i];
    if (c === '%') {
      const hex = host.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex) || (parseInt(hex, 16) < 0x80 && hex !== '25'))
        return `invalid URL escape "${host.slice(i, i + 3)}"`;
      i += 2;
    } else if (c.charCodeAt(0) < 0x80 && !HOST_OK.test(c)) return `invalid character ${JSON.stringify(c)} in host name`;
  }
  return null;
}

/** Go's url.Parse error for `raw` (without the `parse "<url>": ` prefix), or null when it parses. */
export function goUrlError(raw: string): string | null {
  // eslint-disable-next-line no-control-regex -- the control bytes Go refuses
  if (/[\x00-\x1f\x7f]/.test(raw)) return 'net/url: invalid control character in URL';
  const hash = raw.indexOf('#');
  const fragment = hash < 0 ? '' : raw.slice(hash + 1);
  const url = hash < 0 ? raw : raw.slice(0, hash);
  const error = parse(url);
  return error ?? badEscape(fragment);
}

function parse(url: string): string | null {
  if (url === '*') return null;
  let scheme = '';
  let rest = url;
  const match = /^[A-Za-z][A-Za-z0-9+\-.]*:/.exec(url);
  if (url.startsWith(':')) return 'missing protocol scheme';
  if (match) {
    scheme = match[0].slice(0, -1);
    rest = url.slice(match[0].length);
  }
  const query = rest.indexOf('?');
  if (query >= 0) rest = rest.slice(0, query);
  if (!rest.startsWith('/')) {
    if (scheme) return null; // opaque: mailto:x, http:x:y
    const slash = rest.indexOf('/');
    if ((slash < 0 ? rest : rest.slice(0, slash)).includes(':'))
      return 'first path segment in URL cannot contain colon';
  }
  if ((scheme || !rest.startsWith('///')) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!USERINFO.test(userinfo)) return 'net/url: invalid userinfo';
      const escape = badEscape(userinfo);
      if (escape) return escape;
    }
    const host = hostError(authority.slice(at + 1));
    if (host) return host;
  }
  return badEscape(rest);
}
