import type { RetrievedMemory } from '../memories/memory-candidates';

/** The part of a profile's context that does not depend on the question. */
export interface StandingContext {
  profileId: string;
  /** The database's fingerprint of it: the ids and row versions of the profile, its traits, the memories. */
  fingerprint: string;
  summary: string;
  traits: Array<{ key: string; value: unknown }>;
  /** The most important and the most recent memories, as candidates with no rank. */
  memories: RetrievedMemory[];
}

/** What an entry is counted as beyond its text: keys, dates, numbers and the objects that hold them. */
const ENTRY_OVERHEAD_BYTES = 512;
const ROW_OVERHEAD_BYTES = 256;

/**
 * The standing part of recently used profiles' contexts (summary, traits, most important and most
 * recent memories), kept so that the context statement does not send it again while its fingerprint
 * holds. An entry is only ever used after the database confirmed its fingerprint, so a stale entry
 * costs one full answer, never a wrong context. Least recently used entries go first once the entries'
 * approximate size passes the budget (CONTEXT_CACHE_MB; 0 keeps nothing). An erased profile's entries
 * are dropped when this process erases it; another replica's are never used again (the fingerprint
 * names the profile) and age out.
 */
export class StandingContextCache {
  private readonly entries = new Map<string, { context: StandingContext; bytes: number }>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  /** The held copy for this key, marked as just used. */
  get(key: string): StandingContext | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.context;
  }

  set(key: string, context: StandingContext): void {
    this.delete(key);
    const bytes = sizeOf(context);
    if (bytes > this.budgetBytes) return;
    this.entries.set(key, { context, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  /** Drops every entry of this profile (erased: its data is not kept in memory either). */
  forgetProfile(profileId: string): void {
    for (const [key, entry] of this.entries) {
      if (entry.context.profileId === profileId) this.delete(key);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

function sizeOf(context: StandingContext): number {
  let bytes = ENTRY_OVERHEAD_BYTES + 2 * context.summary.length;
  for (const trait of context.traits) bytes += ROW_OVERHEAD_BYTES + 2 * JSON.stringify(trait).length;
  for (const memory of context.memories) bytes += ROW_OVERHEAD_BYTES + 2 * memory.content.length;
  return bytes;
}
