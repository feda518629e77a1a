import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** bench/results/ of the repository (the scripts run from dist/bench). */
const RESULTS_DIR = join(__dirname, '..', '..', 'bench', 'results');

/**
 * Saves a report as bench/results/<its date>.json (the suite's) or <its date>-<kind>.json (a tool's:
 * `ab`, `tail`), the date's colons made dashes; returns the file.
 */
export function saveResult(report: { date: string }, kind?: string): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const name = report.date.replace(/:/g, '-').slice(0, 19) + (kind === undefined ? '' : `-${kind}`);
  const file = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`saved ${file}`);
  return file;
}
