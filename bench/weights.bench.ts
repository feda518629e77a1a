import { Client } from 'pg';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { embeddedPgOptions } from '../src/database/embedded-pg-connection';
import { DAILY_DECAY_RATE, DECAY_FLOOR } from '../src/memories/memory-decay.service';
import { DEFAULT_RANKING_WEIGHTS } from '../src/config/ranking-weights';
import { ServiceProcess } from './service-process';
import { callService, injectedMemoryIds, mean } from './service-http';
import { buildScenarios, PROFILE_PREFIX, Scenario, WEIGHT_FAMILIES, WeightFamily } from './weights-scenarios';

/**
 * Ranking quality where importance and recency matter (LoCoMo measures relevance only: its memories
 * are equally important and about as old), over a grid of ranking weights. Synthetic, deterministic
 * scenarios, one per profile, each with one right memory:
 *
 * - update: an older and a newer memory about the same attribute, with the same key words ("My
 *   favourite drink is coffee", 30-180 days old; "My favourite drink is green tea now", 0-10 days);
 *   the question asks about the attribute; right = the newer one. Same importance, 6 unrelated others.
 * - importance: two memories that match the question's words equally (same words of the question, same
 *   number of lexemes, so the same full-text rank) and are equally old, one important (0.9, "My sister
 *   Anna is allergic to penicillin"), one trivial (0.2, "... likes salted caramel"); right = the
 *   important one. 6 unrelated others.
 * - relevance-vs-importance: the one memory that answers, of low importance (0.2, 3-30 days old),
 *   among 16 unrelated memories of high importance (0.8-1.0) from the last week.
 * - old-relevant: the one memory that answers, 300-500 days old (importance 0.4-0.7), among 15
 *   unrelated memories of the last three weeks (importance 0.3-0.9).
 * - partial-match: the memory that answers both key words of the question ("my dentist's address",
 *   importance 0.3) among 3 that share only the generic one ("My cousin's address is ...", importance
 *   0.8-1.0, recent) and 12 unrelated.
 *
 * Ages are set with SQL after the memories are created through the API, and the decay the service
 * would have applied over those days (×0.95 a day, floor 0.1) is applied with them, as the service's
 * daily decay job computes it, so that the job has nothing left to do when a service starts. Every
 * question is asked through the proxy (debug header, skipExtraction) on a service started with the
 * weights under test; a chat request marks its injected memories as used, so `last_accessed_at` is
 * reset between runs. hit@1: the right memory is the first injected (the header lists them in rank
 * order); recall: it is injected at all (CONTEXT_MAX_MEMORIES, 10 by default).
 */

export interface WeightCombo {
  relevance: number;
  importance: number;
  recency: number;
  halfLifeDays: number;
}

export interface FamilyScore {
  questions: number;
  /** Share of questions whose right memory was injected first. */
  hitAt1: number;
  /** Share of questions whose right memory was injected at all. */
  recall: number;
  /** Mean of 1 / (position of the right memory among the injected), 0 when not injected. */
  mrr: number;
}

export interface WeightsRow {
  weights: WeightCombo;
  /** 'default' for the service's defaults, 'half-life' for the defaults with another half-life. */
  note: 'default' | 'grid' | 'half-life' | 'relevance only';
  families: Record<WeightFamily, FamilyScore>;
  /** Mean over the families of their hit@1 (each family weighs the same). */
  meanHitAt1: number;
  meanRecall: number;
  seconds: number;
}

export interface WeightsReport {
  families: Array<{ name: WeightFamily; instances: number; memoriesPerProfile: number }>;
  memoriesStored: number;
  contextMaxMemories: number;
  /**
   * Checks of the scenarios against the database's own full text: memories meant to be unrelated that
   * share a word with their question, memories meant to match that do not, and importance pairs whose
   * full-text lengths differ (then their relevance would too). All should be 0.
   */
  checks: { unexpectedMatches: number; missingMatches: number; unequalImportancePairs: number };
  rows: WeightsRow[];
  setupSeconds: number;
  seconds: number;
}

const DEFAULTS: WeightCombo = {
  relevance: DEFAULT_RANKING_WEIGHTS.relevance,
  importance: DEFAULT_RANKING_WEIGHTS.importance,
  recency: DEFAULT_RANKING_WEIGHTS.recency,
  halfLifeDays: DEFAULT_RANKING_WEIGHTS.recencyHalfLifeDays,
};
const GRID = {
  relevance: [0.4, 0.6, 0.8],
  importance: [0.1, 0.3, 0.5],
  recency: [0.05, 0.1, 0.2],
};
/** Half-lives tried with the default weights (the grid uses the default, 30 days). */
const HALF_LIVES = [7, 90];
/** Questions in flight at once (each scenario has its own profile, so they do not interfere). */
const CONCURRENCY = 4;
/** Profiles filled at once while storing the scenarios. */
const STORE_CONCURRENCY = 8;

interface StoredScenario extends Scenario {
  memoryIds: string[];
  rightId: string;
}

/**
 * Builds the scenarios (40 per family × BENCH_SCALE, at least 10), stores them through a service on
 * `serviceEnv`'s database, then asks every question once per weight combination, each on its own
 * service.
 */
export async function benchRankingWeights(
  serviceEnv: Record<string, string | undefined>,
  scale: number,
): Promise<WeightsReport> {
  const started = Date.now();
  const instances = Math.max(10, Math.round(40 * scale));
  const scenarios = buildScenarios(instances);
  const contextMaxMemories = Number(serviceEnv.CONTEXT_MAX_MEMORIES ?? '10');

  const service = await ServiceProcess.start(serviceEnv);
  let stored: StoredScenario[];
  try {
    stored = await storeScenarios(service.url, scenarios);
  } finally {
    await service.stop();
  }

  const combos = combinations();
  const startFor = (weights: WeightCombo) => {
    const starting = ServiceProcess.start({
      ...serviceEnv,
      RANK_WEIGHT_RELEVANCE: String(weights.relevance),
      RANK_WEIGHT_IMPORTANCE: String(weights.importance),
      RANK_WEIGHT_RECENCY: String(weights.recency),
      RANK_RECENCY_HALF_LIFE_DAYS: String(weights.halfLifeDays),
    });
    starting.catch(() => undefined); // awaited later; not an unhandled rejection meanwhile
    return starting;
  };
  // On a server the next service boots while the current one is asked (booting reads no memories, and
  // its decay job finds none due); PGlite is one process's, so there one service runs at a time.
  const overlap = serviceEnv.DATABASE_URL !== undefined;
  let next = overlap ? startFor(combos[0].weights) : undefined;
  const rows: WeightsRow[] = [];
  let checks: WeightsReport['checks'];
  let setupSeconds: number;
  try {
    checks = await withDatabase(serviceEnv, async (sql) => {
      await sql(backdateSql(stored));
      return checkScenarios(sql, stored);
    });
    if (checks.unexpectedMatches + checks.missingMatches + checks.unequalImportancePairs > 0)
      console.log(`weights: scenario checks not clean: ${JSON.stringify(checks)}`);
    setupSeconds = seconds(started);

    for (const [index, { weights, note }] of combos.entries()) {
      const runStarted = Date.now();
      const runService = await (next ?? startFor(weights));
      next = overlap && index + 1 < combos.length ? startFor(combos[index + 1].weights) : undefined;
      let positions: Array<{ family: WeightFamily; position: number }>;
      try {
        positions = await askAll(runService.url, stored);
      } finally {
        await runService.stop();
      }
      // The requests marked the injected memories as used: the next run must see the same ages.
      await withDatabase(serviceEnv, (sql) => sql(RESET_ACCESS_SQL));
      rows.push(score(weights, note, positions, seconds(runStarted)));
    }
  } finally {
    if (next)
      await next.then(
        (pending) => pending.stop(),
        () => undefined,
      );
  }

  return {
    families: WEIGHT_FAMILIES.map((name) => {
      const ofFamily = scenarios.filter((s) => s.family === name);
      return { name, instances: ofFamily.length, memoriesPerProfile: ofFamily[0]?.memories.length ?? 0 };
    }),
    memoriesStored: scenarios.reduce((sum, s) => sum + s.memories.length, 0),
    contextMaxMemories,
    checks,
    rows,
    setupSeconds,
    seconds: seconds(started),
  };
}

/** The service's defaults first, the grid, the defaults with other half-lives, relevance alone. */
function combinations(): Array<{ weights: WeightCombo; note: WeightsRow['note'] }> {
  const list: Array<{ weights: WeightCombo; note: WeightsRow['note'] }> = [
    { weights: DEFAULTS, note: 'default' },
  ];
  for (const relevance of GRID.relevance)
    for (const importance of GRID.importance)
      for (const recency of GRID.recency) {
        const weights = { relevance, importance, recency, halfLifeDays: DEFAULTS.halfLifeDays };
        if (!sameWeights(weights, DEFAULTS)) list.push({ weights, note: 'grid' });
      }
  for (const halfLifeDays of HALF_LIVES)
    list.push({ weights: { ...DEFAULTS, halfLifeDays }, note: 'half-life' });
  list.push({
    weights: { relevance: 1, importance: 0, recency: 0, halfLifeDays: DEFAULTS.halfLifeDays },
    note: 'relevance only',
  });
  return list;
}

function sameWeights(a: WeightCombo, b: WeightCombo): boolean {
  return (
    a.relevance === b.relevance &&
    a.importance === b.importance &&
    a.recency === b.recency &&
    a.halfLifeDays === b.halfLifeDays
  );
}

// ---------------------------------------------------------------------------------------------------
// Storing, ageing, asking

async function storeScenarios(serviceUrl: string, scenarios: Scenario[]): Promise<StoredScenario[]> {
  return inParallel(
    scenarios,
    async (scenario) => {
      await callService(serviceUrl, 'POST', '/api/profiles', { externalId: scenario.externalId });
      const memoryIds: string[] = [];
      for (const memory of scenario.memories) {
        const res = await callService(
          serviceUrl,
          'POST',
          `/api/profiles/${encodeURIComponent(scenario.externalId)}/memories`,
          {
            content: memory.content,
            type: memory.type,
            importance: memory.importance,
          },
        );
        const { memory: created } = (await res.json()) as { memory: { id: string } };
        memoryIds.push(created.id);
      }
      if (new Set(memoryIds).size !== memoryIds.length)
        throw new Error(`weights: duplicate memory content in ${scenario.externalId}`);
      const rightId = memoryIds[scenario.memories.findIndex((m) => m.role === 'right')];
      return { ...scenario, memoryIds, rightId };
    },
    STORE_CONCURRENCY,
  );
}

/**
 * Each memory's age, unused since created, and the decay the service's daily job would have applied
 * by now (counted up to the last full day, so the job has nothing left to do at the next start).
 */
function backdateSql(stored: StoredScenario[]): string {
  const values = stored.flatMap((s) => s.memories.map((m, i) => `('${s.memoryIds[i]}'::uuid, ${m.ageDays})`));
  return `UPDATE memories m
    SET created_at = now() - a.age * interval '1 day',
        last_accessed_at = NULL,
        decay_factor = greatest(${DECAY_FLOOR}, power(${DAILY_DECAY_RATE}, floor(a.age))),
        decay_counted_until = now() - a.age * interval '1 day' + floor(a.age) * interval '1 day'
    FROM (SELECT id, age::float8 AS age FROM (VALUES ${values.join(', ')}) AS v (id, age)) AS a
    WHERE m.id = a.id`;
}

const RESET_ACCESS_SQL = `UPDATE memories SET last_accessed_at = NULL
  WHERE last_accessed_at IS NOT NULL
    AND profile_id IN (SELECT id FROM profiles WHERE external_id LIKE '${PROFILE_PREFIX}%')`;

/**
 * Which memories share a word with their question, by the service's own rule (each word of the
 * question as written and as its English stem, stop words left out), against the roles the scenarios
 * give them; and whether each importance pair has the same full-text length.
 */
async function checkScenarios(sql: Sql, stored: StoredScenario[]): Promise<WeightsReport['checks']> {
  const questions = stored.map((s) => `(${literal(s.externalId)}, ${literal(s.question)})`).join(', ');
  const matched = await sql<{ id: string }>(
    `WITH q (external_id, question) AS (VALUES ${questions}),
     units AS (
       SELECT p.id AS profile_id, w.exact, s.stem
       FROM q JOIN profiles p ON p.external_id = q.external_id,
            unnest(tsvector_to_array(to_tsvector('simple'::regconfig, q.question))) AS w (exact),
            LATERAL (SELECT CASE WHEN count(*) > 1 THEN w.exact ELSE min(l) END AS stem
                     FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, w.exact))) AS l) AS s
       WHERE s.stem IS NOT NULL
     )
     SELECT DISTINCT m.id::text AS id FROM units u JOIN memories m ON m.profile_id = u.profile_id
     WHERE m.search_vector @@ quote_literal(u.exact)::tsquery OR m.search_vector @@ quote_literal(u.stem)::tsquery`,
  );
  const matchedIds = new Set(matched.map((row) => row.id));
  let unexpectedMatches = 0;
  let missingMatches = 0;
  for (const s of stored)
    s.memories.forEach((m, i) => {
      const matches = matchedIds.has(s.memoryIds[i]);
      if (m.role === 'other' && matches) unexpectedMatches++;
      if (m.role !== 'other' && !matches) missingMatches++;
    });

  const pairs = stored.filter((s) => s.family === 'importance');
  const lengths = await sql<{ id: string; length: number }>(
    `SELECT id::text AS id, length(search_vector) AS length FROM memories
     WHERE id IN (${pairs.flatMap((s) => s.memoryIds.slice(0, 2).map((id) => `'${id}'`)).join(', ')})`,
  );
  const lengthOf = new Map(lengths.map((row) => [row.id, Number(row.length)]));
  const unequalImportancePairs = pairs.filter(
    (s) => lengthOf.get(s.memoryIds[0]) !== lengthOf.get(s.memoryIds[1]),
  ).length;
  return { unexpectedMatches, missingMatches, unequalImportancePairs };
}

/** Asks every question once; the position (1-based) of its right memory among the injected, 0 if none. */
function askAll(
  serviceUrl: string,
  stored: StoredScenario[],
): Promise<Array<{ family: WeightFamily; position: number }>> {
  return inParallel(stored, async (scenario) => {
    const res = await callService(
      serviceUrl,
      'POST',
      '/v1/chat/completions',
      {
        model: 'bench-model',
        messages: [{ role: 'user', content: scenario.question }],
        service: { debug: true, skipExtraction: true },
      },
      { 'x-service-id': scenario.externalId },
    );
    await res.arrayBuffer();
    // In rank order (the proxy lists the injected memories as ranked).
    const injected = injectedMemoryIds(res);
    return { family: scenario.family, position: injected.indexOf(scenario.rightId) + 1 };
  });
}

function score(
  weights: WeightCombo,
  note: WeightsRow['note'],
  positions: Array<{ family: WeightFamily; position: number }>,
  runSeconds: number,
): WeightsRow {
  const families = {} as Record<WeightFamily, FamilyScore>;
  for (const family of WEIGHT_FAMILIES) {
    const ofFamily = positions.filter((p) => p.family === family).map((p) => p.position);
    families[family] = {
      questions: ofFamily.length,
      hitAt1: mean(ofFamily.map((p) => (p === 1 ? 1 : 0))),
      recall: mean(ofFamily.map((p) => (p > 0 ? 1 : 0))),
      mrr: mean(ofFamily.map((p) => (p > 0 ? 1 / p : 0))),
    };
  }
  return {
    weights,
    note,
    families,
    meanHitAt1: mean(WEIGHT_FAMILIES.map((f) => families[f].hitAt1)),
    meanRecall: mean(WEIGHT_FAMILIES.map((f) => families[f].recall)),
    seconds: runSeconds,
  };
}

// ---------------------------------------------------------------------------------------------------
// Printing

export function printWeightsTable(report: WeightsReport): void {
  const label = (w: WeightCombo) => `${w.relevance} / ${w.importance} / ${w.recency}, ${w.halfLifeDays} d`;
  const sizes = report.families.map((f) => `${f.name} ${f.instances}×${f.memoriesPerProfile}`).join(', ');
  console.log(
    `\nranking weights: ${report.memoriesStored} memories (${sizes}); setup ${report.setupSeconds} s, total ${report.seconds} s; checks ${JSON.stringify(report.checks)}`,
  );
  console.log(
    `| weights rel / imp / rec, half-life | ${WEIGHT_FAMILIES.join(' | ')} | mean hit@1 | recall@${report.contextMaxMemories} (${WEIGHT_FAMILIES.slice(2).join(' / ')}) |`,
  );
  console.log(`|---|${WEIGHT_FAMILIES.map(() => '---:|').join('')}---:|---:|`);
  for (const row of report.rows) {
    const note = row.note === 'grid' ? '' : ` (${row.note})`;
    const recalls = WEIGHT_FAMILIES.slice(2)
      .map((f) => row.families[f].recall)
      .join(' / ');
    console.log(
      `| ${label(row.weights)}${note} | ${WEIGHT_FAMILIES.map((f) => row.families[f].hitAt1).join(' | ')} | ${row.meanHitAt1} | ${recalls} |`,
    );
  }
  const ranked = [...report.rows].sort((a, b) => b.meanHitAt1 - a.meanHitAt1 || b.meanRecall - a.meanRecall);
  const best = ranked.filter((row) => row.meanHitAt1 === ranked[0].meanHitAt1);
  const defaults = report.rows.find((row) => row.note === 'default');
  console.log(
    `best mean hit@1 ${ranked[0].meanHitAt1}: ${best.map((row) => label(row.weights)).join('; ')}` +
      (defaults
        ? `; defaults ${defaults.meanHitAt1} (rank ${ranked.findIndex((row) => row === defaults) + 1} of ${ranked.length})`
        : ''),
  );
}

// ---------------------------------------------------------------------------------------------------
// Helpers

type Sql = <T = Record<string, unknown>>(text: string) => Promise<T[]>;

/** SQL on the target's database: a client of the server, or the embedded one (the service stopped). */
async function withDatabase<T>(
  serviceEnv: Record<string, string | undefined>,
  work: (sql: Sql) => Promise<T>,
): Promise<T> {
  const embedded = serviceEnv.DATABASE_URL ? null : await EmbeddedDatabase.open(serviceEnv.DATA_DIR!);
  const client = new Client(
    embedded ? embeddedPgOptions(embedded.thread) : { connectionString: serviceEnv.DATABASE_URL },
  );
  try {
    await client.connect();
    return await work(async <R>(text: string) => (await client.query(text)).rows as R[]);
  } finally {
    await client.end();
    await embedded?.close();
  }
}

async function inParallel<T, R>(
  items: T[],
  work: (item: T) => Promise<R>,
  concurrency = CONCURRENCY,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function seconds(since: number): number {
  return Math.round((Date.now() - since) / 100) / 10;
}
