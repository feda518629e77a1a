import { LoadResult, runLoad } from './load';

/** Sentences a user might write about themselves, mixed with ones that carry nothing to learn. */
const SENTENCES = [
  'My name is Anna Berg.',
  'I live in Hamburg with my partner.',
  'I love hiking and sailing.',
  'I have two kids and a dog.',
  'The weather was grey all week, and the trains were late again.',
  'I work at a small logistics company as a data analyst.',
  'Yesterday I ran a half marathon.',
  'We talked about the budget for next quarter and nobody agreed on anything.',
  "I'm trying to learn Spanish.",
  'I prefer tea over coffee.',
  'The report is due on Friday, and the numbers still need checking.',
  "I'm allergic to peanuts.",
];

export const INGEST_SIZES = [
  { label: '1 KB', bytes: 1024 },
  { label: '10 KB', bytes: 10 * 1024 },
  { label: '100 KB', bytes: 100 * 1024 },
];

/** A document of exactly `bytes` UTF-8 bytes made of the sentences above, in paragraphs. */
export function ingestDocument(bytes: number): string {
  let text = '';
  for (let i = 0; ; i++) {
    const next = `${SENTENCES[i % SENTENCES.length]}${i % 6 === 5 ? '\n\n' : ' '}`;
    if (Buffer.byteLength(text + next) > bytes) break;
    text += next;
  }
  return text + ' '.repeat(bytes - Buffer.byteLength(text));
}

/**
 * Synchronous ingest latency for 1 KB, 10 KB and 100 KB documents, one request at a time (each into a
 * fresh profile, so every run creates its traits and memories). Run it against a service started with
 * EXTRACTOR=heuristic to measure the service itself rather than an LLM.
 */
export async function benchIngest(baseUrl: string, scale: number): Promise<LoadResult[]> {
  const runs = Math.max(10, Math.round(20 * scale));
  const results: LoadResult[] = [];
  for (const size of INGEST_SIZES) {
    const data = ingestDocument(size.bytes);
    const profile = (i: number) => `bench-ingest-${size.bytes}-${i}`;
    await runLoad(baseUrl, 'create profiles', {
      requests: runs + 3,
      concurrency: 4,
      next: (i) => ({ method: 'POST', path: '/api/profiles', body: { externalId: profile(i) } }),
    });
    // Warm-up on three profiles of their own, then the measured runs on the others.
    await runLoad(baseUrl, 'warm-up', {
      requests: 3,
      concurrency: 1,
      next: (i) => ({ method: 'POST', path: `/api/profiles/${profile(runs + i)}/ingest`, body: { data } }),
    });
    results.push(
      await runLoad(baseUrl, `ingest (heuristic) ${size.label}`, {
        requests: runs,
        concurrency: 1,
        next: (i) => ({ method: 'POST', path: `/api/profiles/${profile(i)}/ingest`, body: { data } }),
      }),
    );
  }
  return results;
}
