/**
 * Secrets in the config history (API.md §4.24): what is committed instead of a secret, and how a
 * restore gets the secret back.
 *
 * - Whole files that are secrets (private keys, PKCS#12 bundles, the initial admin token, anything
 *   under `auth/` that is not YAML) are committed as one line `redacted:<hash>`.
 * - In YAML files, scalar values of secret keys (password, secret, token, bot_token, webhook_url,
 *   api_key, bouncer_key, private_key, client_secret; `hash` under `auth/`; every `headers` value of
 *   a notification channel) and the password of a URL's user info are replaced by `redacted:<hash>`.
 *   `last_used_at` of `auth/tokens.yaml` is left out (it changes once a minute per busy token).
 *   A YAML file that holds no secret is committed byte for byte.
 *
 * `<hash>` is the first 16 hex digits of HMAC-SHA256(key, value) with a random key kept in
 * data/.history/redact-key (never committed, never pushed): a remote copy of the history cannot be
 * brute-forced for short passwords, and a changed secret still shows as a changed line. The values
 * behind the hashes are kept beside it in data/.history/secrets.json (mode 0600, never committed or
 * pushed), so a restore can write a file back with its real secrets; a hash this node has never seen
 * (a clone of another node's history) makes that restore fail, naming the path.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isPair, isScalar, parseDocument, visit, type Document } from 'yaml';
import { writeAtomic } from '../../core/store/atomic-write.ts';

const SECRET_KEYS =
  /^(password|passwd|secret|token|bot_token|webhook_url|api_?key|bouncer_key|private_key|client_secret|machine_password)$/i;
const TOKEN = /^redacted:[0-9a-f]{16}$/;
/** A cheap look for anything redact() would change: a secret key, `headers`, `last_used_at`, a URL with a password. */
const MAYBE_SECRET =
  /(password|passwd|secret|token|webhook_url|api_?key|bouncer_key|private_key|machine_password|hash|headers|last_used_at)["']?\s*:|:\/\/[^/\s@:]*:[^@/\s]+@/i;
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)([^@/\s]+)(@)/i;

/** Files committed as one hash line. */
export function isSecretFile(relative: string): boolean {
  return /\.(key|p12|pfx)$/i.test(relative) || (relative.startsWith('auth/') && !/\.ya?ml$/i.test(relative));
}

const isYaml = (relative: string) => /\.ya?ml$/i.test(relative);

export class Redactor {
  private key: Buffer = Buffer.alloc(0);
  private secrets = new Map<string, string>();
  private dirty = false;

  constructor(private readonly historyDir: string) {}

  async open(): Promise<void> {
    const keyFile = path.join(this.historyDir, 'redact-key');
    const stored = await readFile(keyFile, 'utf8').catch(() => '');
    if (/^[0-9a-f]{64}$/.test(stored.trim())) this.key = Buffer.from(stored.trim(), 'hex');
    else {
      this.key = randomBytes(32);
      await writeAtomic(keyFile, this.key.toString('hex'), { mode: 0o600 });
    }
    const vault = await readFile(path.join(this.historyDir, 'secrets.json'), 'utf8').catch(() => '{}');
    try {
      this.secrets = new Map(Object.entries(JSON.parse(vault) as Record<string, string>));
    } catch {
      this.secrets = new Map();
    }
  }

  /** Writes the values behind new hashes (after a batch; before its commit is visible). */
  async save(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    await writeAtomic(path.join(this.historyDir, 'secrets.json'), JSON.stringify(Object.fromEntries(this.secrets)), {
      mode: 0o600,
    });
  }

  private token(value: Buffer | string): string {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    const token = `redacted:${createHmac('sha256', this.key).update(bytes).digest('hex').slice(0, 16)}`;
    if (!this.secrets.has(token)) {
      this.secrets.set(token, bytes.toString('base64'));
      this.dirty = true;
    }
    return token;
  }

  /** The bytes committed for a data file. */
  redact(relative: string, bytes: Buffer): Buffer {
    if (isSecretFile(relative) || bytes.includes('PRIVATE KEY-----')) return Buffer.from(`${this.token(bytes)}\n`);
    if (!isYaml(relative)) return bytes;
    const text = bytes.toString('utf8');
    // most files (resources, middlewares) hold no secret: skip the YAML parse unless a key or URL could be one
    if (!MAYBE_SECRET.test(text)) return bytes;
    let doc: Document;
    try {
      doc = parseDocument(text, { uniqueKeys: false });
    } catch {
      return this.unparsable(relative, bytes);
    }
    if (doc.errors.length > 0) return this.unparsable(relative, bytes);
    let changed = false;
    const auth = relative.startsWith('auth/');
    const notification = relative.startsWith('notifications/');
    visit(doc, {
      Pair: (_key, pair, ancestors) => {
        if (!isScalar(pair.key)) return;
        const name = String(pair.key.value);
        if (auth && name === 'last_used_at') {
          changed = true;
          return visit.REMOVE;
        }
        const secretKey = SECRET_KEYS.test(name) || (auth && name === 'hash');
        const underHeaders =
          notification && ancestors.some((a) => isPair(a) && isScalar(a.key) && a.key.value === 'headers');
        if (
          (secretKey || underHeaders) &&
          isScalar(pair.value) &&
          pair.value.value !== null &&
          pair.value.value !== ''
        ) {
          const value = String(pair.value.value);
          if (!TOKEN.test(value)) {
            pair.value.value = this.token(value);
            changed = true;
          }
          return undefined;
        }
        if (isScalar(pair.value) && typeof pair.value.value === 'string') {
          const match = URL_PASSWORD.exec(pair.value.value);
          if (match && !TOKEN.test(match[2])) {
            pair.value.value = pair.value.value.replace(URL_PASSWORD, `$1${this.token(match[2])}$3`);
            changed = true;
          }
        }
        return undefined;
      },
    });
    return changed ? Buffer.from(doc.toString({ lineWidth: 0 })) : bytes;
  }

  /** A YAML file that does not parse: a secrets file is hashed whole, any other is kept as it is. */
  private unparsable(relative: string, bytes: Buffer): Buffer {
    const sensitive =
      relative.startsWith('auth/') || relative === 'datasources.yaml' || relative.startsWith('notifications/');
    return sensitive ? Buffer.from(`${this.token(bytes)}\n`) : bytes;
  }

  /**
   * The bytes to write back for committed bytes: hashes replaced by the values this node recorded.
   * Throws naming the first hash it does not know.
   */
  unredact(relative: string, committed: Buffer): Buffer {
    const whole = committed.toString('utf8').trim();
    if (TOKEN.test(whole)) return this.lookup(relative, whole);
    if (!isYaml(relative) || !committed.includes('redacted:')) return committed;
    const doc = parseDocument(committed.toString('utf8'), { uniqueKeys: false });
    visit(doc, {
      Scalar: (_key, node) => {
        if (typeof node.value !== 'string' || !node.value.includes('redacted:')) return;
        if (TOKEN.test(node.value)) node.value = this.lookup(relative, node.value).toString('utf8');
        else {
          const match = URL_PASSWORD.exec(node.value);
          if (match && TOKEN.test(match[2]))
            node.value = node.value.replace(URL_PASSWORD, `$1${this.lookup(relative, match[2]).toString('utf8')}$3`);
        }
      },
    });
    return Buffer.from(doc.toString({ lineWidth: 0 }));
  }

  private lookup(relative: string, token: string): Buffer {
    const value = this.secrets.get(token);
    if (value === undefined) throw new UnknownSecretError(relative, token);
    return Buffer.from(value, 'base64');
  }
}

export class UnknownSecretError extends Error {
  constructor(
    readonly relative: string,
    readonly token: string,
  ) {
    super(`${relative} holds a secret (${token}) this node has not recorded: it cannot be restored from history`);
  }
}
