/**
 * The version gate (API.md §4.9 G14): a post-pass over a generated document that drops every key
 * the polling Traefik cannot decode (model/traefik-versions.ts), from upstream objects and ours
 * alike, since one such key makes Traefik refuse the whole document and keep its previous one.
 *
 * Cost: it walks only the paths of the table (routers, services, middlewares of the gated types),
 * allocates nothing for objects without a gated key, and returns the document itself when nothing
 * is dropped. A changed object is copied once per (object, version): unchanged upstream objects keep
 * their copy across generations, so the serializer's fragment cache still recognises them. It runs
 * once per generation and version (documents are prepared before they are served), never per poll.
 */
import type { JsonObject } from '../../model/types.ts';
import {
  KEY_TREE,
  parseVersion,
  treeFor,
  undecodable,
  type KeyNode,
  type Version,
} from '../../model/traefik-versions.ts';
import { pointerToken } from '../../core/json-pointer.ts';

/** One key left out of the served document (Status `dropped_keys`). */
export interface DroppedKey {
  /** JSON Pointer of the object that held it, e.g. `/tcp/services/app/loadBalancer` */
  path: string;
  key: string;
  /** first Traefik version that decodes it; null when none does */
  min_version: string | null;
}

export interface GatedDocument {
  config: JsonObject;
  dropped: DroppedKey[];
}

/**
 * Returned by the walk for an object left empty: Traefik refuses most empty objects too, so it goes
 * (those it decodes empty, EMPTY_DECODED in model/traefik-versions.ts, stay).
 */
const REMOVE = Symbol('remove');

export class VersionGate {
  private versionText: string | null | undefined = undefined;
  private version: Version | null = null;
  /** map entry (a router, service, middleware object) → its gated copy, for the current version */
  private copies = new WeakMap<object, unknown>();
  private last: { config: JsonObject; result: GatedDocument } | null = null;
  /** the table's keys the current version cannot decode (treeFor); null: nothing to drop */
  private active: KeyNode | null = null;

  constructor(private readonly tree: KeyNode = KEY_TREE) {}

  /**
   * `config` as Traefik `versionText` (null: unknown) can decode it. The same config and version
   * give the same result object (memoised), and the config itself when nothing is dropped.
   */
  apply(config: JsonObject, versionText: string | null): GatedDocument {
    if (versionText !== this.versionText) {
      this.versionText = versionText;
      this.version = parseVersion(versionText);
      this.active = treeFor(this.version, this.tree);
      this.copies = new WeakMap();
      this.last = null;
    }
    if (this.last?.config === config) return this.last.result;
    const dropped: DroppedKey[] = [];
    const out = this.active ? this.strip(config, this.active, [], dropped) : config;
    const result: GatedDocument = {
      config: out === REMOVE ? {} : (out as JsonObject),
      dropped,
    };
    this.last = { config, result };
    return result;
  }

  /** `value` without its undecodable keys: `value` itself when nothing goes, REMOVE when it ends up empty. */
  private strip(value: unknown, node: KeyNode, path: string[], dropped: DroppedKey[]): unknown {
    if (Array.isArray(value)) return this.stripItems(value, node, path, dropped);
    if (typeof value !== 'object' || value === null) return value;
    const object = value as JsonObject;
    let out: JsonObject | null = null;
    const gated = node.keyList;
    for (let i = 0; i < gated.length; i++) {
      const [key, entry] = gated[i];
      if (!Object.hasOwn(object, key) || !undecodable(entry, this.version)) continue;
      out ??= { ...object };
      delete out[key];
      dropped.push({ path: pointer(path), key, min_version: entry.since });
    }
    const any = node.any;
    if (any) {
      // a map (`http.services`): every entry
      const named = node.childList.length > 0;
      const keys = Object.keys(object);
      for (let i = 0; i < keys.length; i++) {
        const child = (named && node.children.get(keys[i])) || any;
        out = this.visit(object, out, keys[i], child, child === any, path, dropped);
      }
    } else {
      // a fixed object: only the table's children
      const children = node.childList;
      for (let i = 0; i < children.length; i++) {
        const [key, child] = children[i];
        if (Object.hasOwn(object, key)) out = this.visit(object, out, key, child, false, path, dropped);
      }
    }
    if (out === null) return object;
    return Object.keys(out).length === 0 && !node.keepEmpty ? REMOVE : out;
  }

  /** Strips `object[key]`; returns the copy of `object` (made on the first change) or null. */
  private visit(
    object: JsonObject,
    out: JsonObject | null,
    key: string,
    child: KeyNode,
    entry: boolean,
    path: string[],
    dropped: DroppedKey[],
  ): JsonObject | null {
    const before = object[key];
    if (before === undefined || typeof before !== 'object' || before === null) return out;
    if (out !== null && !Object.hasOwn(out, key)) return out;
    path.push(key);
    let after = this.strip(before, child, path, dropped);
    path.pop();
    if (after === before) return out;
    if (entry && after !== REMOVE) {
      // a map entry: the same object keeps the same copy (the serializer's cache key)
      const kept = this.copies.get(before);
      if (kept !== undefined) after = kept;
      else this.copies.set(before, after);
    }
    const copy = out ?? { ...object };
    if (after === REMOVE) delete copy[key];
    else copy[key] = after;
    return copy;
  }

  private stripItems(items: unknown[], node: KeyNode, path: string[], dropped: DroppedKey[]): unknown {
    const child = node.children.get('[]');
    if (!child) return items;
    let out: unknown[] | null = null;
    for (let i = 0; i < items.length; i++) {
      path.push(String(i));
      const after = this.strip(items[i], child, path, dropped);
      path.pop();
      if (after === items[i] && out === null) continue;
      out ??= items.slice(0, i);
      if (after !== REMOVE) out.push(after);
    }
    return out ?? items;
  }
}

function pointer(path: readonly string[]): string {
  return path.length === 0 ? '' : `/${path.map(pointerToken).join('/')}`;
}
