import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { DEFAULT_RANKING_WEIGHTS, type RankingWeights } from '../src/config/ranking-weights';
import { HeldMemoryCandidates, type QuestionUnit } from '../src/memories/held-memory-candidates';
import { CANDIDATES_PER_SOURCE, namesIn, questionUnitsSql } from '../src/memories/memory-candidates';
import { scoreAndRankMemories } from '../src/memories/memory-ranking';
import {
  ADVERSARIAL,
  CATEGORY_NAMES,
  LOCOMO_PATH,
  type LocomoSample,
  memoryContent,
  turnsOf,
} from './locomo.bench';
import { mean } from './service-http';

/** The LoCoMo memories are stored this far apart (the bench stores them one after another). */
const STORED_APART_US = 5000;
/** The tie order of equal scores follows the ids: the replica averages over this many orders. */
const ID_ORDERS = 4;

/**
 * `node dist/bench/locomo-replica.js` (after `npm run build`): the LoCoMo suite's recall in one process,
 * for trying rankings in seconds. Each conversation is held as HeldMemoryCandidates holds a small
 * profile (words and stems from the server's `to_tsvector`, as the stored search vector has them), each
 * question split into words by the server (`questionUnitsSql`), its candidates ranked by
 * `scoreAndRankMemories`. The bench's candidates for these profiles come from the statement, which
 * gives the same (held-memory-candidates e2e tests); its recall is within 0.005 of this, since the ids,
 * and so the order of equal scores, differ. Recall is averaged over ID_ORDERS orders. RANKING_WEIGHTS
 * (JSON, merged into DEFAULT_RANKING_WEIGHTS and its associations) tries other weights;
 * BENCH_PG_ADMIN_URL names the server (no table is read or written).
 */
async function main(): Promise<void> {
  const tried = JSON.parse(process.env.RANKING_WEIGHTS ?? '{}') as Partial<RankingWeights>;
  const weights: RankingWeights = {
    ...DEFAULT_RANKING_WEIGHTS,
    ...tried,
    associations: { ...DEFAULT_RANKING_WEIGHTS.associations, ...tried.associations },
  };
  const db = new Client({
    connectionString: process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  await db.connect();
  const samples = JSON.parse(readFileSync(LOCOMO_PATH, 'utf8')) as LocomoSample[];
  const recalls = new Map<string, number[]>();
  let candidates = 0;
  let asked = 0;
  try {
    for (let order = 1; order <= ID_ORDERS; order++) {
      for (const sample of samples) {
        const texts = [...turnsOf(sample)].map(memoryContent);
        const ids = [...turnsOf(sample)].map(({ turn }) => turn.dia_id);
        const { rows } = await db.query<{ lexemes: string[] }>(
          `SELECT tsvector_to_array(to_tsvector('english'::regconfig, t) || to_tsvector('simple'::regconfig, t)) AS lexemes
           FROM unnest($1::text[]) WITH ORDINALITY AS x (t, i) ORDER BY i`,
          [texts],
        );
        const start = Date.parse('2026-01-01T00:00:00Z') * 1000;
        const idByTurn = new Map(ids.map((turn, i) => [turn, idOf(`${order}-${sample.sample_id}-${i}`)]));
        const held = HeldMemoryCandidates.from(
          texts.map((content, i) => ({
            id: idByTurn.get(ids[i])!,
            version: '1',
            content,
            type: 'event' as const,
            importance: 0.5,
            decay_factor: 1,
            created_at: new Date((start + i * STORED_APART_US) / 1000).toISOString(),
            last_accessed_at: null,
            created_us: String(start + i * STORED_APART_US),
            superseded: false,
            lexemes: rows[i].lexemes,
          })),
        );
        if (!held) throw new Error(`sample ${sample.sample_id} cannot be held`);
        const now = new Date(start / 1000 + 60_000 + (texts.length * STORED_APART_US) / 1000);
        for (const qa of sample.qa.filter((q) => q.category !== ADVERSARIAL)) {
          const evidence = [...new Set(qa.evidence)]
            .map((turn) => idByTurn.get(turn))
            .filter((id): id is string => !!id);
          if (evidence.length === 0) continue;
          const units = await db.query<QuestionUnit>(questionUnitsSql('$1', '$2'), [
            qa.question,
            namesIn(qa.question),
          ]);
          const found = held.candidates(units.rows, CANDIDATES_PER_SOURCE);
          candidates += found.length;
          asked++;
          const injected = new Set(
            scoreAndRankMemories(found, now, weights, 10, qa.question).map((entry) => entry.memory.id),
          );
          const recall = evidence.filter((id) => injected.has(id)).length / evidence.length;
          for (const key of ['overall', CATEGORY_NAMES[qa.category]]) {
            recalls.set(key, [...(recalls.get(key) ?? []), recall]);
          }
        }
      }
    }
  } finally {
    await db.end();
  }
  const report = Object.fromEntries(
    [...recalls].map(([key, values]) => [key, Number(mean(values).toFixed(4))]),
  );
  console.log(JSON.stringify({ ...report, meanCandidates: Math.round(candidates / asked) }));
}

/** A uuid made from a text, so that an order of ids is the same in every run. */
function idOf(text: string): string {
  const h = createHash('md5').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
