/** A deterministic pseudo-random sequence in [0, 1) for generated test data (a linear congruential generator). */
export function seededRandom(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}
