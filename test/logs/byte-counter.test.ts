/**
 * The stats' counters (issue 11): values counted from byte ranges and from strings must give exactly
 * what a Map of strings gives, through table growth, arena growth and hash collisions.
 */
import test from 'ava';
import { ByteCounter } from '../../plugins/logs/byte-counter.ts';
import { seededRandom } from '../helpers/random.ts';

test('counts equal a Map of strings, whether values come as bytes or strings', (t) => {
  const counter = new ByteCounter();
  const reference = new Map<string, number>();
  const random = seededRandom(3);
  const values = Array.from({ length: 20_000 }, (_, i) =>
    i % 5 === 0 ? `/päth/${i} ✓` : i % 7 === 0 ? '' : `/api/v1/org/${Math.floor(random() * 1e9)}/x`,
  );
  // one chunk holding the ASCII values, as the scan hands them over
  const chunk = Buffer.from(values.join('\n'), 'utf8');
  const offsets: number[] = [];
  for (let i = 0, at = 0; i < values.length; i++) {
    offsets.push(at);
    at += Buffer.byteLength(values[i]) + 1;
  }
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < values.length; i += 1 + Math.floor(random() * 3)) {
      const value = values[i];
      if ((i + round) % 2 === 0) counter.bumpBytes(chunk, offsets[i], offsets[i] + Buffer.byteLength(value));
      else counter.bump(value);
      reference.set(value, (reference.get(value) ?? 0) + 1);
    }
  }
  counter.bump(null);
  t.is(counter.size, reference.size);
  t.deepEqual(new Map(counter.entries()), reference);
  t.true(reference.size > 10_000, `${reference.size} distinct values`);
});

test('values that differ only in their last byte or their length are different keys', (t) => {
  const counter = new ByteCounter();
  for (const value of ['a', 'ab', 'abc', 'abd', 'ab', 'a', '', '', 'b']) counter.bump(value);
  // a key longer than a storage block (256 KiB) gets a block of its own; the next keys go on after it
  const long = 'x'.repeat(300_000);
  counter.bump(long);
  counter.bumpBytes(Buffer.from(`${long}y`), 0, long.length);
  counter.bump('after');
  t.is(counter.entries().find(([value]) => value === long)?.[1], 2);
  t.is(counter.entries().at(-1)?.[0], 'after');
  t.deepEqual(counter.entries().slice(0, 6), [
    ['a', 2],
    ['ab', 2],
    ['abc', 1],
    ['abd', 1],
    ['', 2],
    ['b', 1],
  ]);
});

test('top(n) equals sorting every value by count, ties by JavaScript string order', (t) => {
  const counter = new ByteCounter();
  const reference = new Map<string, number>();
  const random = seededRandom(5);
  // ASCII, accented, a private-use character and an astral one (UTF-8 and UTF-16 order them differently)
  const alphabet = ['a', 'b', 'B', '/', 'é', '\uE000', '😀', 'z'];
  for (let i = 0; i < 5000; i++) {
    let value = '';
    for (let k = Math.floor(random() * 4); k >= 0; k--) value += alphabet[Math.floor(random() * alphabet.length)];
    const times = random() < 0.9 ? 1 : 1 + Math.floor(random() * 3);
    for (let k = 0; k < times; k++) counter.bump(value);
    reference.set(value, (reference.get(value) ?? 0) + times);
  }
  const expected = (n: number) =>
    [...reference]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, n)
      .map(([value, count]) => ({ value, count }));
  for (const n of [0, 1, 5, 100, 5000, 10_000]) t.deepEqual(counter.top(n), expected(n), `top ${n}`);
  t.true(counter.top(10_000).some((e) => e.value.includes('😀')) && reference.size < 10_000);
});
