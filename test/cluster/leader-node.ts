/**
 * One cluster node in its own process, for the tests that SIGKILL a leader: campaigns with
 * core/cluster/leadership.ts and prints one JSON line per state change on stdout.
 *   node --import tsx leader-node.ts <endpoints,comma-separated> <prefix> <node name> <ttl s>
 */
import pino from 'pino';
import { connectEtcd } from '../../core/cluster/etcd.ts';
import { Leadership } from '../../core/cluster/leadership.ts';

const [endpoints, prefix, nodeName, ttl] = process.argv.slice(2);
const etcd = connectEtcd({ endpoints: endpoints!.split(','), prefix: prefix!, call_timeout_ms: 2000 });
const leadership = new Leadership({
  etcd: etcd.ns,
  nodeName: nodeName!,
  ttlS: Number(ttl),
  logger: pino({ level: 'silent' }),
});
const say = (event: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ event, at: Date.now(), ...extra })}\n`);
leadership.on('elected', () => say('elected'));
leadership.on('demoted', (reason: string) => say('demoted', { reason }));
leadership.start();
say('started', { pid: process.pid });
process.on('SIGTERM', () => {
  void leadership.stop().then(() => {
    etcd.close();
    process.exit(0);
  });
});
