/** A minimal reader of the Prometheus text exposition format (0.0.4), strict enough to catch a broken one. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Metric family name to its TYPE (counter, gauge, histogram, summary, untyped). */
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;
const FAMILY_SUFFIXES = ['_bucket', '_sum', '_count', '_created'];

/** Parses the text; throws on any line that is not a comment, a HELP/TYPE line or a sample of a typed family. */
export function parsePrometheusText(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const typeLine = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(
      line,
    );
    if (typeLine) {
      types.set(typeLine[1], typeLine[2]);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`line ${index + 1} is not a sample: ${line}`);
    const value = parseValue(match[3]);
    if (value === undefined) throw new Error(`line ${index + 1} has a bad value: ${line}`);
    const sample = { name: match[1], labels: parseLabels(match[2] ?? '', index + 1), value };
    if (familyOf(sample.name, types) === undefined) {
      throw new Error(`line ${index + 1}: ${sample.name} has no # TYPE line before it`);
    }
    samples.push(sample);
  }
  return { types, samples };
}

/** Sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return matching(exposition, name, labels).reduce((sum, sample) => sum + sample.value, 0);
}

export function matching(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): Sample[] {
  return exposition.samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** Go's ParseFloat, as Prometheus reads values: NaN and Inf in any case, with a sign for Inf. */
function parseValue(text: string): number | undefined {
  if (/^nan$/i.test(text)) return NaN;
  const infinity = /^([+-]?)inf$/i.exec(text);
  if (infinity) return infinity[1] === '-' ? -Infinity : Infinity;
  const value = Number(text);
  return text.trim() === '' || Number.isNaN(value) ? undefined : value;
}

function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const suffix = FAMILY_SUFFIXES.find((candidate) => name.endsWith(candidate));
  return suffix && types.has(name.slice(0, -suffix.length)) ? name.slice(0, -suffix.length) : undefined;
}

function parseLabels(text: string, lineNumber: number): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`line ${lineNumber} has malformed labels: {${text}}`);
    labels[match[1]] = match[2].replace(/\\(["\\n])/g, (_all, char: string) => (char === 'n' ? '\n' : char));
  }
  return labels;
}
