/** One line of the benchmark's Markdown table. */
export interface Row {
  measure: string;
  ours: string;
  reference: string;
  goal: string;
  verdict: string;
}
