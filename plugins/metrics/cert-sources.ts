/**
 * Where certificate expiry dates come from (API.md §4.21 `certs`): Traefik's Prometheus endpoint
 * (`traefik_tls_certs_not_after{cn,serial,sans}`, unix seconds; `proxy.metrics_url`) and Traefik's
 * ACME store (`acme.json` at `proxy.acme_path`: per resolver, `Certificates[].certificate` is the
 * base64 of the PEM chain). Only certificates are read from acme.json, never its private keys.
 */
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type Forge from 'node-forge';

export type CertificateSource = 'metrics' | 'acme';

/** One certificate as a source reports it. */
export interface CertificateReading {
  cn: string;
  /** unix seconds */
  notAfter: number;
  source: CertificateSource;
  /** the `sans` label of Traefik's metric (comma list), when not empty */
  sans?: string[];
  /** acme.json: the resolver (top-level key) that holds the certificate */
  resolver?: string;
  /** acme.json: `domain.main` then `domain.sans` */
  domains?: string[];
}

const METRIC = 'traefik_tls_certs_not_after';
/** Traefik's /metrics is a few hundred KiB at most; anything far bigger is not it. */
const MAX_METRICS_BYTES = 32 * 1024 * 1024;

/** GETs Traefik's metrics page and returns its certificates; throws on HTTP or network errors, or when `stop` aborts. */
export async function readTraefikMetrics(
  url: string,
  timeoutMs: number,
  stop?: AbortSignal,
): Promise<CertificateReading[]> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
  const response = await fetch(url, { signal, headers: { accept: 'text/plain' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const text = await response.text();
  if (text.length > MAX_METRICS_BYTES) throw new Error(`${url} answered more than ${MAX_METRICS_BYTES} bytes`);
  return parseCertificateMetrics(text);
}

/** The `traefik_tls_certs_not_after` samples of a Prometheus text page. */
export function parseCertificateMetrics(text: string): CertificateReading[] {
  const out: CertificateReading[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(METRIC) || (line[METRIC.length] !== '{' && line[METRIC.length] !== ' ')) continue;
    const sample = parseSample(line.slice(METRIC.length));
    if (!sample) continue;
    const cn = sample.labels.get('cn');
    if (cn === undefined || cn === '' || !Number.isFinite(sample.value)) continue;
    const sans = (sample.labels.get('sans') ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    out.push({ cn, notAfter: sample.value, source: 'metrics', ...(sans.length > 0 ? { sans } : {}) });
  }
  return out;
}

/** `{a="x",b="y"} 1.5e+09` (labels optional, escapes \\ \" \n) → labels and value; null when malformed. */
function parseSample(rest: string): { labels: Map<string, string>; value: number } | null {
  const labels = new Map<string, string>();
  let i = 0;
  if (rest[0] === '{') {
    i = 1;
    while (rest[i] !== '}') {
      const eq = rest.indexOf('=', i);
      if (eq < 0 || rest[eq + 1] !== '"') return null;
      const name = rest.slice(i, eq).trim();
      let value = '';
      let j = eq + 2;
      for (; j < rest.length && rest[j] !== '"'; j++) {
        if (rest[j] === '\\' && j + 1 < rest.length) {
          j += 1;
          value += rest[j] === 'n' ? '\n' : rest[j];
        } else value += rest[j];
      }
      if (j >= rest.length) return null;
      labels.set(name, value);
      i = j + 1;
      if (rest[i] === ',') i += 1;
      if (i >= rest.length) return null;
    }
    i += 1;
  }
  const [value] = rest.slice(i).trim().split(/\s+/);
  return { labels, value: Number(value) };
}

let forgeModule: typeof Forge | null = null;
/** node-forge, required on first use (it costs ~30 ms of a start that may never read acme.json). */
const forge = (): typeof Forge => (forgeModule ??= createRequire(import.meta.url)('node-forge') as typeof Forge);

/** Reads acme.json and returns the leaf certificate of every entry of every resolver; throws when unreadable. */
export async function readAcmeFile(file: string): Promise<CertificateReading[]> {
  const text = await readFile(file, 'utf8');
  if (text.trim() === '') return []; // Traefik creates it empty before the first certificate
  return parseAcme(JSON.parse(text) as unknown);
}

/** The certificates of a parsed acme.json (entries that do not parse are skipped). */
export function parseAcme(document: unknown): CertificateReading[] {
  const out: CertificateReading[] = [];
  if (!isObject(document)) return out;
  for (const [name, resolver] of Object.entries(document)) {
    if (!isObject(resolver) || !Array.isArray(resolver.Certificates)) continue;
    for (const entry of resolver.Certificates as unknown[]) {
      if (!isObject(entry) || typeof entry.certificate !== 'string') continue;
      const domain = isObject(entry.domain) ? entry.domain : {};
      const main = typeof domain.main === 'string' ? domain.main : null;
      const domains = [main, ...(Array.isArray(domain.sans) ? (domain.sans as unknown[]) : [])].filter(
        (value): value is string => typeof value === 'string' && value !== '',
      );
      const leaf = leafOf(Buffer.from(entry.certificate, 'base64').toString('utf8'));
      if (leaf)
        out.push({ cn: leaf.cn || main || '', notAfter: leaf.notAfter, source: 'acme', resolver: name, domains });
    }
  }
  return out.filter((reading) => reading.cn !== '');
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * The first certificate of a PEM chain: its subject CN and notAfter. node-forge reads RSA
 * certificates; it refuses other public keys (ECDSA, which Let's Encrypt issues too), which Node's
 * X509Certificate then reads.
 */
function leafOf(pem: string): { cn: string; notAfter: number } | null {
  const block = PEM_BLOCK.exec(pem)?.[0];
  if (!block) return null;
  try {
    const certificate = forge().pki.certificateFromPem(block);
    const cn = certificate.subject.getField('CN') as { value?: unknown } | null;
    return {
      cn: typeof cn?.value === 'string' ? cn.value : '',
      notAfter: Math.floor(certificate.validity.notAfter.getTime() / 1000),
    };
  } catch {
    try {
      const certificate = new X509Certificate(block);
      const cn = /^CN=(.*)$/m.exec(certificate.subject)?.[1] ?? '';
      return { cn, notAfter: Math.floor(Date.parse(certificate.validTo) / 1000) };
    } catch {
      return null;
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
