/**
 * Decision and allowlist targets (API.md §4.23): one IPv4/IPv6 address or a CIDR range, and the
 * containment rules the allowlist applies to decisions.
 */
import { BlockList } from 'node:net';
import { ipVersion } from './ip-address.ts';

export interface Target {
  /** CrowdSec's scope names. */
  scope: 'Ip' | 'Range';
  /** The value as CrowdSec gets it (a range is kept as sent: it must be its network address). */
  value: string;
  version: 4 | 6;
  address: string;
  /** 32/128 for an address. */
  prefix: number;
}

/** The target `value` names, or why it is not one (a message for a 422). */
export function parseTarget(value: string): Target | { error: string } {
  const [address, prefixText, extra] = value.split('/');
  const version = ipVersion(address);
  if (version === 0 || extra !== undefined)
    return { error: `must be an IPv4 or IPv6 address or a CIDR range (got ${JSON.stringify(value.slice(0, 60))})` };
  const bits = version === 4 ? 32 : 128;
  if (prefixText === undefined) return { scope: 'Ip', value, version, address, prefix: bits };
  const prefix = /^[0-9]{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
  if (prefix < 0 || prefix > bits) return { error: `has a prefix length outside 0–${bits} (got /${prefixText})` };
  const network = networkOf(address, version, prefix);
  if (network !== toBigInt(address, version))
    return { error: `has host bits set: the range is ${format(network, version)}/${prefix}` };
  return { scope: 'Range', value, version, address, prefix };
}

/** Whether `outer` contains all of `inner` (same family, at least as long a prefix, network inside). */
export function contains(outer: Target, inner: Target): boolean {
  if (outer.version !== inner.version || inner.prefix < outer.prefix) return false;
  const type = outer.version === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  list.addSubnet(outer.address, outer.prefix, type);
  return list.check(inner.address, type);
}

/** CIDR ranges are nested or disjoint: two targets overlap when one contains the other. */
export const overlaps = (a: Target, b: Target): boolean => contains(a, b) || contains(b, a);

function toBigInt(address: string, version: 4 | 6): bigint {
  if (version === 4) return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
  let text = address;
  // an embedded IPv4 tail (::ffff:192.0.2.1) becomes two groups
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = toBigInt(v4[1], 4);
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, group) => (n << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

function networkOf(address: string, version: 4 | 6, prefix: number): bigint {
  const bits = BigInt(version === 4 ? 32 : 128);
  const hostBits = bits - BigInt(prefix);
  return (toBigInt(address, version) >> hostBits) << hostBits;
}

function format(n: bigint, version: 4 | 6): string {
  if (version === 4) return [24n, 16n, 8n, 0n].map((shift) => String((n >> shift) & 0xffn)).join('.');
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => ((n >> shift) & 0xffffn).toString(16));
  // URL's host parser writes IPv6 in its shortest form
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
