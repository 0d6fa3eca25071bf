/** API tokens in data/auth/tokens.yaml: only SHA-256 hashes are stored, comparison is constant-time (API.md §2.3). */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { StoreDocument, YamlStore } from '../store/types.ts';
import type { Role } from '../types.ts';
import { SLUG_PATTERN } from '../ids.ts';

export const TOKENS_FILE = 'auth/tokens.yaml';
export const INITIAL_ADMIN_FILE = 'auth/initial-admin-token';
export const INITIAL_ADMIN_NAME = 'initial-admin';
const SECRET_FILE_MODE = 0o600;
const SECRET_DIR_MODE = 0o700;
const TOKEN_FORMAT = /^smk_[A-Za-z0-9_-]{43}$/;
/** `last_used_at` is written at most once a minute per token (API.md §4.15): a busy client must not rewrite the file on every request. */
const TOUCH_INTERVAL_MS = 60_000;

export const ROLES = ['viewer', 'operator', 'admin'] as const;
const RoleSchema = Type.Union(ROLES.map((r) => Type.Literal(r)));
const NullableTime = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const StoredToken = Type.Object({
  name: Type.String({ pattern: SLUG_PATTERN }),
  hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  role: RoleSchema,
  created_at: Type.String(),
  expires_at: NullableTime,
  last_used_at: NullableTime,
});
const TokenFile = Type.Array(StoredToken);
type StoredToken = Static<typeof StoredToken>;

/** A token as the API shows it: everything but the hash. */
export interface TokenInfo {
  name: string;
  role: Role;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface TokenLogger {
  error(obj: object, msg: string): void;
}

/** A new clear token: `smk_` + 43 base64url chars (32 random bytes). */
export const generateToken = (): string => `smk_${randomBytes(32).toString('base64url')}`;
const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();
const infoOf = ({ hash: _hash, ...rest }: StoredToken): TokenInfo => ({
  ...rest,
  expires_at: rest.expires_at ?? null,
  last_used_at: rest.last_used_at ?? null,
});

/** Token persistence, creation and verification; `now` is the app's injectable clock. */
export class TokenStore {
  private readonly pending = new Set<Promise<unknown>>();
  private readonly touchedAt = new Map<string, number>();

  private constructor(
    private readonly document: StoreDocument<StoredToken[]>,
    private readonly now: () => Date,
    private readonly log: TokenLogger,
  ) {}

  /** Opens tokens.yaml (0600 in a 0700 dir) through the store. */
  static async open(store: YamlStore, now: () => Date, log: TokenLogger): Promise<TokenStore> {
    const document = await store.document<StoredToken[]>({
      path: TOKENS_FILE,
      schema: TokenFile,
      initial: () => [],
      fileMode: SECRET_FILE_MODE,
      dirMode: SECRET_DIR_MODE,
    });
    return new TokenStore(document, now, log);
  }

  /** All tokens sorted by name, without hashes. */
  list(): TokenInfo[] {
    return this.document
      .get()
      .map(infoOf)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** True when the file holds no token and is readable (a broken hand edit must not be overwritten). */
  isEmpty(): boolean {
    return this.document.get().length === 0 && this.document.invalidFiles().length === 0;
  }

  /** Creates a token; the clear value is returned once and never stored. */
  async create(
    name: string,
    role: Role,
    expiresInDays?: number,
    token = generateToken(),
  ): Promise<{ token: string; info: TokenInfo } | 'exists'> {
    const created = this.now();
    const record: StoredToken = {
      name,
      role,
      hash: sha256(token).toString('hex'),
      created_at: created.toISOString(),
      expires_at:
        expiresInDays === undefined ? null : new Date(created.getTime() + expiresInDays * 86_400_000).toISOString(),
      last_used_at: null,
    };
    let exists = false;
    await this.document.update((current) => {
      exists = current.some((t) => t.name === name);
      return exists ? undefined : [...current, record];
    });
    return exists ? 'exists' : { token, info: infoOf(record) };
  }

  /** Deletes a token unless it is the last usable admin token (that would lock every admin out). */
  async remove(name: string): Promise<'deleted' | 'not_found' | 'last_admin'> {
    let outcome: 'deleted' | 'not_found' | 'last_admin' = 'not_found';
    await this.document.update((current) => {
      const target = current.find((t) => t.name === name);
      const usableAdmin = (t: StoredToken) => t.role === 'admin' && !this.expired(t);
      if (!target) outcome = 'not_found';
      else if (usableAdmin(target) && !current.some((t) => t !== target && usableAdmin(t))) outcome = 'last_admin';
      else outcome = 'deleted';
      return outcome === 'deleted' ? current.filter((t) => t !== target) : undefined;
    });
    return outcome;
  }

  /** The token's entry when `token` is known and not expired; every stored hash is compared in constant time. */
  verify(token: string): TokenInfo | undefined {
    if (!TOKEN_FORMAT.test(token)) return undefined;
    const presented = sha256(token);
    let match: StoredToken | undefined;
    // No early exit: the time taken must not tell how many stored hashes were tried.
    for (const stored of this.document.get()) {
      if (timingSafeEqual(presented, Buffer.from(stored.hash, 'hex')) && !match) match = stored;
    }
    return match && !this.expired(match) ? infoOf(match) : undefined;
  }

  /** Records a use of the token in the background, at most once a minute. */
  touch(info: TokenInfo): void {
    const nowMs = this.now().getTime();
    const last = Math.max(info.last_used_at ? Date.parse(info.last_used_at) : 0, this.touchedAt.get(info.name) ?? 0);
    if (nowMs - last < TOUCH_INTERVAL_MS) return;
    this.touchedAt.set(info.name, nowMs);
    const stamp = new Date(nowMs).toISOString();
    const work = this.document
      .update((current) => {
        const index = current.findIndex((t) => t.name === info.name);
        if (index < 0) return undefined;
        current[index] = { ...current[index], last_used_at: stamp };
        return current;
      })
      .catch((err) => this.log.error({ err, token: info.name }, 'failed to record last_used_at'));
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** Waits for background `last_used_at` writes (app close). */
  async close(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private expired(token: StoredToken): boolean {
    return !!token.expires_at && Date.parse(token.expires_at) <= this.now().getTime();
  }
}

/**
 * First start (API.md §2.3): creates the `initial-admin` token. The clear file (0600) is written
 * before the hash is stored, so a crash in between never leaves an admin token nobody can read
 * (the next start simply tries again). Returns the file's path relative to the data dir, or undefined.
 */
export async function createInitialAdmin(tokens: TokenStore, store: YamlStore): Promise<string | undefined> {
  if (!tokens.isEmpty()) return undefined;
  const token = generateToken();
  await store.writeRaw(INITIAL_ADMIN_FILE, `${token}\n`, SECRET_FILE_MODE, SECRET_DIR_MODE);
  const created = await tokens.create(INITIAL_ADMIN_NAME, 'admin', undefined, token);
  return created === 'exists' ? undefined : INITIAL_ADMIN_FILE;
}
