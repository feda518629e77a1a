import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { callService, injectedMemoryIds, mean } from './service-http';

/** The LoCoMo data lives outside the repository (its licence forbids copying it in). */
export const LOCOMO_PATH =
  process.env.LOCOMO_PATH ?? join(__dirname, '..', '..', '..', 'shared', 'data', 'locomo-dev.json');

export const CATEGORY_NAMES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};
export const ADVERSARIAL = 5;

export interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
}

export interface LocomoSample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: Array<{ question: string; evidence: string[]; category: number }>;
}

export interface RecallReport {
  questions: number;
  recall: number;
  meanInjected: number;
  byCategory: Record<string, { questions: number; recall: number }>;
  memoriesStored: number;
  seconds: number;
}

export function locomoAvailable(): boolean {
  return existsSync(LOCOMO_PATH);
}

/**
 * Retrieval quality on LoCoMo: each conversation's turns become the memories of one profile (through
 * the API), each non-adversarial question is asked through the proxy as the only user message, and
 * recall is the share of the question's evidence turns found among the memories the proxy injected.
 */
export async function benchLocomoRecall(serviceUrl: string, runTag: string): Promise<RecallReport> {
  const started = Date.now();
  const samples = JSON.parse(readFileSync(LOCOMO_PATH, 'utf8')) as LocomoSample[];
  let memoriesStored = 0;
  const perQuestion: Array<{ category: number; recall: number; injected: number }> = [];

  for (const sample of samples) {
    const userId = `locomo-${sample.sample_id}-${runTag}`;
    await callService(serviceUrl, 'POST', '/api/profiles', { externalId: userId });
    const memoryIdByTurn = new Map<string, string>();
    for (const entry of turnsOf(sample)) {
      const res = await callService(
        serviceUrl,
        'POST',
        `/api/profiles/${encodeURIComponent(userId)}/memories`,
        {
          content: memoryContent(entry),
          type: 'event',
        },
      );
      const { memory } = (await res.json()) as { memory: { id: string } };
      memoryIdByTurn.set(entry.turn.dia_id, memory.id);
      memoriesStored++;
    }

    for (const qa of sample.qa.filter((q) => q.category !== ADVERSARIAL)) {
      const evidence = [...new Set(qa.evidence)]
        .map((id) => memoryIdByTurn.get(id))
        .filter((id): id is string => !!id);
      if (evidence.length === 0) continue;
      const res = await callService(
        serviceUrl,
        'POST',
        '/v1/chat/completions',
        {
          model: 'bench-model',
          messages: [{ role: 'user', content: qa.question }],
          service: { debug: true, skipExtraction: true },
        },
        { 'x-service-id': userId },
      );
      await res.arrayBuffer();
      const injected = new Set(injectedMemoryIds(res));
      const found = evidence.filter((id) => injected.has(id)).length;
      perQuestion.push({ category: qa.category, recall: found / evidence.length, injected: injected.size });
    }
  }

  const byCategory: RecallReport['byCategory'] = {};
  for (const [category, name] of Object.entries(CATEGORY_NAMES)) {
    const rows = perQuestion.filter((q) => q.category === Number(category));
    byCategory[name] = { questions: rows.length, recall: mean(rows.map((q) => q.recall)) };
  }
  return {
    questions: perQuestion.length,
    recall: mean(perQuestion.map((q) => q.recall)),
    meanInjected: mean(perQuestion.map((q) => q.injected)),
    byCategory,
    memoriesStored,
    seconds: Math.round((Date.now() - started) / 1000),
  };
}

/** Every memory the recall benchmark stores, as stored (to train the stand-in embeddings model). */
export function locomoTurnTexts(): string[] {
  const samples = JSON.parse(readFileSync(LOCOMO_PATH, 'utf8')) as LocomoSample[];
  return samples.flatMap((sample) => [...turnsOf(sample)].map(memoryContent));
}

export function memoryContent({ turn, when }: { turn: LocomoTurn; when: string }): string {
  return `${turn.speaker} (${when}): ${turn.text}`;
}

export function* turnsOf(sample: LocomoSample): Generator<{ turn: LocomoTurn; when: string }> {
  const sessions = Object.keys(sample.conversation)
    .map((key) => /^session_(\d+)$/.exec(key))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[1]))
    .sort((a, b) => a - b);
  for (const session of sessions) {
    const dateTime = sample.conversation[`session_${session}_date_time`];
    const when = typeof dateTime === 'string' ? dateTime : '';
    for (const turn of sample.conversation[`session_${session}`] as LocomoTurn[]) yield { turn, when };
  }
}
