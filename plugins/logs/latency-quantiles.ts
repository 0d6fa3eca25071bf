/**
 * Latency percentiles in bounded memory (API.md §4.13, issue 11). Up to EXACT_LIMIT values they are
 * exact (nearest rank over the sorted values, as before); past it every value goes into a DDSketch
 * (@datadog/sketches-js) with RELATIVE_ACCURACY: each percentile is within ±1% of the exact nearest-rank
 * value, whatever the number of lines, in a few KiB. DDSketch is mergeable, so partial scans could be
 * combined; `max` stays exact.
 */
import { DDSketch } from '@datadog/sketches-js';

export const EXACT_LIMIT = 65_536;
export const RELATIVE_ACCURACY = 0.01;

export class LatencyQuantiles {
  private exact: Float64Array | null = new Float64Array(1024);
  private exactCount = 0;
  private sketch: DDSketch | null = null;
  private maxValue = Number.NEGATIVE_INFINITY;
  private minValue = Number.POSITIVE_INFINITY;
  count = 0;

  add(value: number): void {
    this.count++;
    if (value > this.maxValue) this.maxValue = value;
    if (value < this.minValue) this.minValue = value;
    if (this.sketch) {
      this.sketch.accept(value);
      return;
    }
    let exact = this.exact!;
    if (this.exactCount === exact.length) {
      if (exact.length >= EXACT_LIMIT) {
        this.toSketch().accept(value);
        return;
      }
      const grown = new Float64Array(exact.length * 2);
      grown.set(exact);
      this.exact = exact = grown;
    }
    exact[this.exactCount++] = value;
  }

  /** Moves the exact values into a sketch; from now on memory stays constant. */
  private toSketch(): DDSketch {
    const sketch = new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY });
    for (let i = 0; i < this.exactCount; i++) sketch.accept(this.exact![i]);
    this.exact = null;
    this.sketch = sketch;
    return sketch;
  }

  /** Percentile p (0–100): nearest rank while exact, else the sketch's estimate clamped to [min, max]. */
  percentiles(ps: number[]): (number | null)[] {
    if (this.count === 0) return ps.map(() => null);
    if (this.sketch) {
      const sketch = this.sketch;
      return ps.map((p) => Math.min(this.maxValue, Math.max(this.minValue, sketch.getValueAtQuantile(p / 100))));
    }
    const sorted = this.exact!.slice(0, this.exactCount).sort();
    return ps.map((p) => sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]);
  }

  get max(): number | null {
    return this.count === 0 ? null : this.maxValue;
  }
}
