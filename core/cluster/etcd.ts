/**
 * The etcd client of cluster mode (issue 14). etcd3 (gRPC, the same port as the v3 JSON gateway)
 * is used rather than hand-written gateway calls: it already does lease keep-alive streams, watch
 * streams that resume from their last revision after a reconnect, txn builders and per-host
 * failover, which is most of what a cluster client needs.
 *
 * Every unary call gets a deadline (a stopped cluster must turn a write into a prompt 502, not a
 * request that hangs), streams none. Watches reconnect with a short backoff (2 s at most; etcd3's
 * default grows to 30 s), so a node catches up soon after etcd returns.
 */
import { readFileSync } from 'node:fs';
import { ConsecutiveBreaker, ExponentialBackoff, handleWhen, retry, circuitBreaker } from 'cockatiel';
import { Etcd3, isRecoverableError, type IOptions, type Namespace } from 'etcd3';

export interface EtcdSettings {
  /** Client URLs of the members (`http://host:2379`, `https://...`). */
  endpoints: string[];
  /** Key prefix of this Stack Manager cluster; every key lives below it. */
  prefix: string;
  /** Deadline of one unary call (ms). */
  call_timeout_ms: number;
  username?: string;
  password?: string;
  tls?: { ca_file?: string; cert_file?: string; key_file?: string };
}

export interface EtcdConnection {
  /** The raw client (namespace ''): for status and maintenance calls. */
  client: Etcd3;
  /** Everything of this cluster: keys relative to `prefix`. */
  ns: Namespace;
  close(): void;
}

function credentials(tls: EtcdSettings['tls']): IOptions['credentials'] {
  if (!tls?.ca_file && !tls?.cert_file) return undefined;
  return {
    rootCertificate: tls.ca_file ? readFileSync(tls.ca_file) : Buffer.alloc(0),
    ...(tls.cert_file ? { certChain: readFileSync(tls.cert_file) } : {}),
    ...(tls.key_file ? { privateKey: readFileSync(tls.key_file) } : {}),
  };
}

export function connectEtcd(settings: EtcdSettings): EtcdConnection {
  const client = new Etcd3({
    hosts: settings.endpoints,
    dialTimeout: settings.call_timeout_ms,
    credentials: credentials(settings.tls),
    ...(settings.username ? { auth: { username: settings.username, password: settings.password ?? '' } } : {}),
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + settings.call_timeout_ms }),
    faultHandling: {
      // one retry on another member, and a member that failed 3 times in a row rests for 2 s
      global: retry(handleWhen(isRecoverableError), { maxAttempts: 1 }),
      host: () =>
        circuitBreaker(handleWhen(isRecoverableError), { halfOpenAfter: 2_000, breaker: new ConsecutiveBreaker(3) }),
      // etcd3 1.1 reads `duration` and `next()` of this object: an IBackoff, i.e. the factory's first step
      watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 2_000 }).next(),
    },
  });
  const prefix = settings.prefix.endsWith('/') ? settings.prefix : `${settings.prefix}/`;
  return { client, ns: client.namespace(prefix), close: () => client.close() };
}
