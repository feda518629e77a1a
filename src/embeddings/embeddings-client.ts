import { isPlainObject } from '../common/json-values';
import { MAX_VECTOR_DIMENSIONS } from '../config/app-config';
import { readTextUpTo } from '../upstream/upstream-body';
import { classifyUpstreamFailure, UpstreamClient } from '../upstream/upstream-client';

/** An answer larger than this is not a batch of embeddings (64 inputs × 3,072 floats is about 4 MB). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** What became of one `/embeddings` call. */
export type EmbeddingOutcome =
  | { kind: 'vectors'; vectors: number[][] }
  /** 400, 413, 422: the provider refused these inputs; splitting the batch may isolate the bad one. */
  | { kind: 'rejected'; detail: string }
  /** Anything else: unreachable, timed out, 401, 429, 5xx, an answer that is not a set of vectors. */
  | { kind: 'failed'; reason: string };

const REJECTED_STATUSES = new Set([400, 413, 422]);

/**
 * Calls an OpenAI-compatible `/embeddings` endpoint (the configured base URL only) and checks what comes
 * back: one finite vector per input, all of one size. Never throws for the provider's failures.
 */
export class EmbeddingsClient {
  constructor(
    private readonly client: UpstreamClient,
    private readonly options: { model: string; dimensions: number | null; timeoutMs: number },
  ) {}

  get model(): string {
    return this.options.model;
  }

  async embed(inputs: string[], signal?: AbortSignal): Promise<EmbeddingOutcome> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const body: Record<string, unknown> = {
      model: this.options.model,
      input: inputs,
      encoding_format: 'float',
    };
    if (this.options.dimensions !== null) body.dimensions = this.options.dimensions;
    try {
      const response = await this.client.send({
        method: 'POST',
        path: '/embeddings',
        body: JSON.stringify(body),
        signal: combined,
      });
      const text = await readTextUpTo(response.body, MAX_ANSWER_BYTES);
      if (response.status >= 200 && response.status < 300) return readVectors(text, inputs.length);
      const detail = `HTTP ${response.status}: ${text.slice(0, 300)}`;
      return REJECTED_STATUSES.has(response.status)
        ? { kind: 'rejected', detail }
        : { kind: 'failed', reason: detail };
    } catch (error) {
      if (timeout.aborted) return { kind: 'failed', reason: `no answer within ${this.options.timeoutMs} ms` };
      const failure = classifyUpstreamFailure(error);
      if (failure) return { kind: 'failed', reason: failure.message };
      throw error;
    }
  }
}

/** The vectors of an answer, in input order, or why the answer is unusable. */
export function readVectors(text: string, expected: number): EmbeddingOutcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'failed', reason: 'the answer is not JSON' };
  }
  const data = isPlainObject(parsed) ? parsed.data : undefined;
  if (!Array.isArray(data) || data.length !== expected)
    return { kind: 'failed', reason: `expected ${expected} embeddings in "data"` };
  const vectors = new Array<number[] | undefined>(expected);
  for (const [position, item] of data.entries()) {
    if (!isPlainObject(item)) return { kind: 'failed', reason: 'an embedding is not an object' };
    const index = typeof item.index === 'number' ? item.index : position;
    const vector = readVector(item.embedding);
    if (!Number.isInteger(index) || index < 0 || index >= expected || vectors[index] || !vector)
      return { kind: 'failed', reason: `embedding ${position} is not a usable vector` };
    vectors[index] = vector;
  }
  const size = vectors[0]?.length ?? 0;
  if (vectors.some((vector) => vector?.length !== size))
    return { kind: 'failed', reason: 'the embeddings differ in size' };
  return { kind: 'vectors', vectors: vectors as number[][] };
}

/** A float array, or the base64 of little-endian float32s that some providers send regardless. */
function readVector(value: unknown): number[] | null {
  let vector: number[];
  if (Array.isArray(value)) {
    if (!value.every((x): x is number => typeof x === 'number')) return null;
    vector = value;
  } else if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'base64');
    if (bytes.length % 4 !== 0) return null;
    vector = Array.from(new Float32Array(new Uint8Array(bytes).buffer)); // copied: aligned to 4 bytes
  } else {
    return null;
  }
  const usable =
    vector.length > 0 &&
    vector.length <= MAX_VECTOR_DIMENSIONS &&
    vector.every(Number.isFinite) &&
    vector.some((x) => x !== 0);
  return usable ? vector : null;
}
