/**
 * node-forge, loaded on first use: importing it costs ~30 ms of every start (issue 11), and only
 * mTLS operations (CA, client certificates, CRL, PKCS#12) need it. Types: `import type Forge`.
 */
import { createRequire } from 'node:module';
import type Forge from 'node-forge';

let loaded: typeof Forge | null = null;
const load = (): typeof Forge => (loaded ??= createRequire(import.meta.url)('node-forge') as typeof Forge);

/** node-forge's namespace; the module is required when a member is first read. */
export const forge = new Proxy({} as typeof Forge, {
  get: (_target, key) => load()[key as keyof typeof Forge],
});
