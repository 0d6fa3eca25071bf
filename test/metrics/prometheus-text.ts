/**
 * A small parser of Prometheus' text format 0.0.4 for the tests: every sample with its labels, and
 * the `# TYPE` of every family. Strict where a scraper is: a sample line that does not parse, a label
 * value with a raw newline, or a sample of a family without `# TYPE` fails the test.
 */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedMetrics {
  types: Map<string, string>;
  samples: ParsedSample[];
  /** Samples of `name` whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): ParsedSample[];
  /** The one value of `name` with `labels`; throws when there is not exactly one. */
  value(name: string, labels?: Record<string, string>): number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/;
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/;

export function parsePrometheusText(text: string): ParsedMetrics {
  const types = new Map<string, string>();
  const samples: ParsedSample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1], type[2]);
      else if (!line.startsWith('# HELP ')) throw new Error(`unknown comment line: ${line}`);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`sample line does not parse: ${line}`);
    const labels: Record<string, string> = {};
    let rest = match[3] ?? '';
    while (rest.trim() !== '') {
      const label = LABEL.exec(rest);
      if (!label) throw new Error(`labels do not parse: ${line}`);
      labels[label[1]] = label[2].replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(label[0].length);
    }
    // Go's ParseFloat, which Prometheus uses, takes NaN and Inf in any case (prom-client writes `Nan`)
    const word = match[4].toLowerCase();
    const value = word === '+inf' || word === 'inf' ? Infinity : word === '-inf' ? -Infinity : Number(match[4]);
    if (Number.isNaN(value) && word !== 'nan') throw new Error(`value does not parse: ${line}`);
    const family = [...types.keys()].find(
      (name) =>
        match[1] === name ||
        (/_(bucket|sum|count)$/.test(match[1]) && match[1].replace(/_(bucket|sum|count)$/, '') === name),
    );
    if (!family) throw new Error(`sample of a family without # TYPE: ${line}`);
    samples.push({ name: match[1], labels, value });
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter(
      (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
  return {
    types,
    samples,
    find,
    value(name, labels = {}) {
      const found = find(name, labels);
      if (found.length !== 1)
        throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}: ${JSON.stringify(found)}`);
      return found[0].value;
    },
  };
}
