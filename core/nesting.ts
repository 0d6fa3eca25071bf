/**
 * Nesting limit of bodies and data files (API.md §2.10): a value may hold at most 64 levels of
 * arrays/objects. Code that walks bodies (Traefik number checks, explanations, the YAML renderer)
 * recurses; past a few thousand levels that throws RangeError, or kills the process when V8 has to
 * compile a regular expression with the stack exhausted. The walks here are iterative, so they are
 * safe at any depth, and run once, before anything else sees the value.
 */
import { pointerToken } from './json-pointer.ts';

/** Levels of arrays/objects a body or data file may hold; the root container is level 1. */
export const MAX_NESTING = 64;

export interface ValueFault {
  kind: 'nesting' | 'non_finite';
  /** JSON Pointer of the container that passed the limit, or of the non-finite number. */
  path: string;
  message: string;
}

const NESTING_MESSAGE = `nests deeper than ${MAX_NESTING} levels of arrays/objects`;
const NON_FINITE_MESSAGE = 'must be a finite number (received a number beyond ±1.8e308)';

/**
 * The first fault of a parsed JSON value: a container past MAX_NESTING (it wins: it is checked
 * before anything else looks at the body), else a NaN/±Infinity (JSON.parse turns 1e309 into
 * Infinity, §2.1). O(nodes) with no path built on the way; paths are found again only on failure.
 */
export function valueFault(value: unknown): ValueFault | null {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'number' && !Number.isFinite(value)
      ? { kind: 'non_finite', path: '', message: NON_FINITE_MESSAGE }
      : null;
  }
  const found = walk(value);
  if (found === 'nesting') return nestingFault(value);
  return found === 'non_finite'
    ? { kind: 'non_finite', path: firstPath(value, isNonFinite) as string, message: NON_FINITE_MESSAGE }
    : null;
}

/** JSON Pointer of the first container past MAX_NESTING levels, or null (any JavaScript value). */
export function nestingPathOf(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  return walk(value) === 'nesting' ? firstPath(value, tooDeep) : null;
}

/** One iterative pass: 'nesting' as soon as a container passes the limit, else whether a number is not finite. */
function walk(root: object): 'nesting' | 'non_finite' | null {
  const nodes: object[] = [root];
  const depths: number[] = [1];
  let nonFinite = false;
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>;
    const depth = depths.pop() as number;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === 'object') {
          if (child === null) continue;
          if (depth === MAX_NESTING) return 'nesting';
          nodes.push(child);
          depths.push(depth + 1);
        } else if (typeof child === 'number' && !Number.isFinite(child)) nonFinite = true;
      }
      continue;
    }
    // for-in: own enumerable keys of plain objects (JSON.parse and YAML results have no others)
    for (const key in node) {
      const child = node[key];
      if (typeof child === 'object') {
        if (child === null) continue;
        if (depth === MAX_NESTING) return 'nesting';
        nodes.push(child);
        depths.push(depth + 1);
      } else if (typeof child === 'number' && !Number.isFinite(child)) nonFinite = true;
    }
  }
  return nonFinite ? 'non_finite' : null;
}

function nestingFault(value: unknown): ValueFault {
  return { kind: 'nesting', path: firstPath(value, tooDeep) as string, message: NESTING_MESSAGE };
}

/** JSON Pointer of the first NaN/±Infinity in a value (depth-limited like valueFault), or null. */
export function nonFiniteNumberAt(value: unknown): string | null {
  return firstPath(value, isNonFinite);
}

/** A string with a lone UTF-16 surrogate ("\ud800" in JSON): no character, Go's decoder (Traefik) reads U+FFFD for it. */
const illFormed = (text: string): boolean => !(text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * JSON Pointer of the first string value or key holding a lone UTF-16 surrogate, or null. JSON.parse
 * accepts `"\ud800"`; stored, it would reach Traefik as U+FFFD, another value than the one accepted.
 */
export function loneSurrogateAt(value: unknown): string | null {
  return firstPath(value, (child) => typeof child === 'string' && illFormed(child), illFormed);
}

type Test = (value: unknown, depth: number) => boolean;
/** A container at level MAX_NESTING + 1 (the walk never goes below it). */
const tooDeep: Test = (value, depth) => depth > MAX_NESTING && typeof value === 'object' && value !== null;
const isNonFinite: Test = (value) => typeof value === 'number' && !Number.isFinite(value);

interface Frame {
  node: Record<string, unknown>;
  keys: string[];
  next: number;
}

/**
 * JSON Pointer of the first node, in document order, that passes `test` (`depth`: the root is at 1,
 * its children at 2). Iterative, and never descends below MAX_NESTING + 1: its frames are bounded.
 */
function firstPath(root: unknown, test: Test, testKey?: (key: string) => boolean): string | null {
  if (test(root, 1)) return '';
  if (typeof root !== 'object' || root === null) return null;
  const frames: Frame[] = [{ node: root as Record<string, unknown>, keys: Object.keys(root), next: 0 }];
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    if (frame.next === frame.keys.length) {
      frames.pop();
      continue;
    }
    const key = frame.keys[frame.next++];
    const child = frame.node[key];
    const depth = frames.length + 1;
    if (test(child, depth) || (testKey !== undefined && !Array.isArray(frame.node) && testKey(key)))
      return pointer(frames);
    if (typeof child === 'object' && child !== null && depth <= MAX_NESTING)
      frames.push({ node: child as Record<string, unknown>, keys: Object.keys(child), next: 0 });
  }
  return null;
}

/** The pointer of the key each frame is at (the last one: the node found). */
function pointer(frames: Frame[]): string {
  let out = '';
  for (const frame of frames) out += `/${pointerToken(frame.keys[frame.next - 1])}`;
  return out;
}
