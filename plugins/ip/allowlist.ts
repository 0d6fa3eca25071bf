/** Which of our IP allow-list middlewares let an address through (API.md §4.12 `allowlisted_by`). */
import { BlockList } from 'node:net';
import type { StoredObject } from '../../core/store/types.ts';
import type { MiddlewareData } from '../middlewares/schemas.ts';
import { ipVersion } from './ip-address.ts';

const ALLOW_LIST_TYPES = new Set(['ipAllowList', 'ipWhiteList']);

/** Ids (sorted) of ipAllowList/ipWhiteList middlewares whose `sourceRange` contains `ip`. */
export function allowlistedBy(ip: string, middlewares: StoredObject<MiddlewareData>[]): string[] {
  const family = ipVersion(ip) === 6 ? 'ipv6' : 'ipv4';
  return middlewares
    .filter((m) => ALLOW_LIST_TYPES.has(m.data.type) && rangesOf(m.data.config).check(ip, family))
    .map((m) => m.id)
    .sort();
}

/** The middleware's `sourceRange` entries (addresses and CIDRs, v4 or v6) as a BlockList; bad entries are ignored. */
function rangesOf(config: Record<string, unknown>): BlockList {
  const list = new BlockList();
  const ranges = Array.isArray(config.sourceRange) ? config.sourceRange : [];
  for (const entry of ranges) {
    if (typeof entry !== 'string') continue;
    const [address, prefix, extra] = entry.trim().split('/');
    const version = ipVersion(address);
    if (version === 0 || extra !== undefined) continue;
    const type = version === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const bits = /^[0-9]{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (bits < 0 || bits > (version === 6 ? 128 : 32)) continue;
    list.addSubnet(address, bits, type);
  }
  return list;
}
