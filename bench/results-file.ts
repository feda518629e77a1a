import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** bench/results/ of the repository (the scripts run from dist/bench). */
export const RESULTS_DIR = join(__dirname, '..', '..', 'bench', 'results');

/**
 * Saves a report of a bench tool as bench/results/<its date>-<kind>.json, the date's colons made
 * dashes, and says where; returns the file.
 */
export function saveResult(report: { date: string }, kind: string): string {
  const file = join(RESULTS_DIR, `${report.date.replace(/:/g, '-').slice(0, 19)}-${kind}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`saved ${file}`);
  return file;
}
