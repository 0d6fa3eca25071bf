/**
 * Requests per distinct value, keyed by the value's UTF-8 bytes (issue 11). The scan hands most values
 * over as byte ranges of the chunk it read: hashing them here (FNV-1a) and comparing the bytes with
 * the stored key costs half of what a Map lookup of a new string costs (V8 hashes every new string in
 * its runtime), and no string is made per request. Keys are copied into an arena when first seen, so
 * memory grows with the distinct values only, never with the lines read.
 */
const EMPTY_SLOT = -1;
const encoder = new TextEncoder();

export class ByteCounter {
  /** Open addressing, linear probing: entry index per slot, or EMPTY_SLOT. */
  private slots = new Int32Array(256).fill(EMPTY_SLOT);
  private hashes = new Int32Array(64);
  private offsets = new Int32Array(64);
  private lengths = new Int32Array(64);
  private counts = new Float64Array(64);
  private arena = new Uint8Array(4096);
  private used = 0;
  size = 0;
  /** Scratch for string keys (slow paths): encoded here, then counted as bytes. */
  private scratch = new Uint8Array(256);

  /** Counts the value b[start, end). */
  bumpBytes(b: Uint8Array, start: number, end: number): void {
    let hash = 0x811c9dc5 | 0;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ b[i], 0x01000193);
    const mask = this.slots.length - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot];
      if (entry === EMPTY_SLOT) {
        this.slots[slot] = this.insert(hash, b, start, length);
        // at most half full: probes stay short
        if (this.size * 2 > this.slots.length) this.rehash();
        return;
      }
      if (this.hashes[entry] === hash && this.lengths[entry] === length && this.sameBytes(entry, b, start, length)) {
        this.counts[entry]++;
        return;
      }
    }
  }

  /** Counts a value read as a string (null: not counted). */
  bump(value: string | null): void {
    if (value === null) return;
    if (value.length * 3 > this.scratch.length) this.scratch = new Uint8Array(value.length * 3);
    const { written } = encoder.encodeInto(value, this.scratch);
    this.bumpBytes(this.scratch, 0, written);
  }

  /** Every value (decoded as UTF-8) with its count, in first-seen order. */
  entries(): [string, number][] {
    const decoder = new TextDecoder();
    const out: [string, number][] = [];
    for (let e = 0; e < this.size; e++)
      out.push([
        decoder.decode(this.arena.subarray(this.offsets[e], this.offsets[e] + this.lengths[e])),
        this.counts[e],
      ]);
    return out;
  }

  private sameBytes(entry: number, b: Uint8Array, start: number, length: number): boolean {
    const arena = this.arena;
    const offset = this.offsets[entry];
    for (let k = 0; k < length; k++) if (arena[offset + k] !== b[start + k]) return false;
    return true;
  }

  private insert(hash: number, b: Uint8Array, start: number, length: number): number {
    const entry = this.size++;
    if (entry === this.counts.length) this.growEntries();
    if (this.used + length > this.arena.length) {
      const grown = new Uint8Array(Math.max(this.arena.length * 2, this.used + length));
      grown.set(this.arena.subarray(0, this.used));
      this.arena = grown;
    }
    this.arena.set(b.subarray(start, start + length), this.used);
    this.hashes[entry] = hash;
    this.offsets[entry] = this.used;
    this.lengths[entry] = length;
    this.counts[entry] = 1;
    this.used += length;
    return entry;
  }

  private growEntries(): void {
    const capacity = this.counts.length * 2;
    const grow = <T extends Int32Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    this.hashes = grow(this.hashes, (n) => new Int32Array(n));
    this.offsets = grow(this.offsets, (n) => new Int32Array(n));
    this.lengths = grow(this.lengths, (n) => new Int32Array(n));
    this.counts = grow(this.counts, (n) => new Float64Array(n));
  }

  /** Doubles the slot table and places every entry again. */
  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(EMPTY_SLOT);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.size; entry++) {
      let slot = this.hashes[entry] & mask;
      while (slots[slot] !== EMPTY_SLOT) slot = (slot + 1) & mask;
      slots[slot] = entry;
    }
    this.slots = slots;
  }
}
