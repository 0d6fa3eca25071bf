/**
 * ustar headers written straight into the archive's batch buffer, byte for byte what tar's
 * `Header.encode` writes for our portable entries (uid/gid 0, no owner names), for the common case
 * of an ASCII path under 100 bytes and a size below 8 GiB. Encoding through tar's Header class cost
 * ~40% of a backup of 20,000 small files (object, path parsing, field strings, and their garbage,
 * issue 11); anything else still goes through tar (headerOf in archive-body.ts, with a PAX header).
 */

const NAME_BYTES = 100;
/** The largest size a 12-byte octal field holds (tar switches to base-256 and PAX beyond). */
const MAX_SIZE = 0o77777777777;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const MAGIC_VERSION = 'ustar\u000000';

export interface UstarEntry {
  path: string;
  /** `0` regular file, `5` directory. */
  typeflag: '0' | '5';
  mode: number;
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
}

/** Whether `writeUstar` can encode the entry (else use tar's Header with PAX). */
export const fitsUstar = (entry: UstarEntry): boolean =>
  entry.path.length < NAME_BYTES &&
  entry.size <= MAX_SIZE &&
  entry.size >= 0 &&
  entry.mode <= 0o7777777 &&
  entry.mtime >= 0 &&
  entry.mtime <= MAX_SIZE &&
  PRINTABLE_ASCII.test(entry.path);

/** tar's octal field: digits zero-padded to `size - 2`, then a space and a NUL. */
function octal(buf: Buffer, offset: number, size: number, value: number): void {
  const digits = Math.floor(value).toString(8);
  const text = digits.length === size - 1 ? `${digits}\0` : `${digits.padStart(size - 2, '0')} \0`;
  buf.write(text, offset, size, 'latin1');
}

/** Writes the 512-byte header at `offset` (the caller checked `fitsUstar`). */
export function writeUstar(buf: Buffer, offset: number, entry: UstarEntry): void {
  buf.fill(0, offset, offset + 512);
  buf.write(entry.path, offset, NAME_BYTES, 'latin1');
  octal(buf, offset + 100, 8, entry.mode);
  octal(buf, offset + 108, 8, 0); // uid
  octal(buf, offset + 116, 8, 0); // gid
  octal(buf, offset + 124, 12, entry.size);
  octal(buf, offset + 136, 12, entry.mtime);
  buf[offset + 156] = entry.typeflag.charCodeAt(0);
  buf.write(MAGIC_VERSION, offset + 257, 8, 'latin1');
  octal(buf, offset + 329, 8, 0); // devmajor
  octal(buf, offset + 337, 8, 0); // devminor
  // the checksum counts its own field as eight spaces
  let sum = 8 * 0x20;
  for (let i = offset; i < offset + 148; i++) sum += buf[i];
  for (let i = offset + 156; i < offset + 512; i++) sum += buf[i];
  octal(buf, offset + 148, 8, sum);
}
