import type { ChangeToken } from '../database/profile-changes';
import type { HeldMemoryCandidates } from '../memories/held-memory-candidates';
import type { RetrievedMemory } from '../memories/memory-candidates';

/** What a held context always has: the profile, the database's fingerprint of what is held, and both texts. */
interface HeldProfileParts {
  profileId: string;
  /** The database's fingerprint of what is held: the ids and row versions of the rows it came from. */
  fingerprint: string;
  summary: string;
  traits: Array<{ key: string; value: unknown }>;
}

/**
 * A small profile held whole: its memories are ranked in the process (HeldMemoryCandidates). While no
 * change of the profile was notified since `confirmed` (ProfileChangeFeed), and until `trustedUntil`
 * (at most CONTEXT_HELD_TRUST_MS after the read that confirmed it), it is used without asking the
 * database.
 */
export interface WholeProfile extends HeldProfileParts {
  kind: 'whole';
  memories: HeldMemoryCandidates;
  /** The database server's start time when the memories were read: their row versions hold for it. */
  serverStarted: string;
  /** The feed's moment before the read that last matched this copy; null when the feed was not live. */
  confirmed: ChangeToken | null;
  /** Until when (performance.now()) it may be used without asking: heldTrustUntil of that read's start. */
  trustedUntil: number;
}

/**
 * The part of a larger profile's context that does not depend on the question: summary, traits and
 * the most important and the most recent memories (as candidates with no rank).
 */
export interface StandingContext extends HeldProfileParts {
  kind: 'standing';
  memories: RetrievedMemory[];
}

/** A profile found at or past the word-scan limit: its context is built by the database. */
export interface LargeProfile {
  kind: 'large';
  profileId: string;
}

export type HeldContext = WholeProfile | StandingContext | LargeProfile;

/** Erased profiles whose erasure is remembered; past this a read that began before the oldest stores nothing. */
const REMEMBERED_ERASURES = 10_000;

/** What an entry is counted as beyond its text: keys, dates, numbers and the objects that hold them. */
const ENTRY_OVERHEAD_BYTES = 512;
const ROW_OVERHEAD_BYTES = 256;
const WORD_OVERHEAD_BYTES = 48;

/**
 * Recently used profiles' contexts, kept so that the context statements do not send them again while
 * their fingerprint holds: small profiles whole, larger ones their standing part. An entry is only
 * ever used after the database confirmed its fingerprint, so a stale entry costs one full answer,
 * never a wrong context. Least recently used entries go first once the entries' approximate size
 * passes the budget (CONTEXT_CACHE_MB; 0 keeps nothing). An erased profile's entries are dropped when
 * this process erases it, and a read that began before (noted `moment()`) stores nothing of it after;
 * another replica's are never used again (the fingerprint names the profile) and age out.
 */
export class HeldContexts {
  private readonly entries = new Map<string, { context: HeldContext; bytes: number }>();
  private bytes = 0;
  /** How many erasures this process made; `erasedAt` numbers each remembered profile's. */
  private erasures = 0;
  private readonly erasedAt = new Map<string, number>();
  /** Erasures up to this number are no longer in `erasedAt`. */
  private forgottenErasuresThrough = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Now, for `set`: what a reader notes before it reads. */
  moment(): number {
    return this.erasures;
  }

  /** The held context for this key, marked as just used. */
  get(key: string): HeldContext | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.context;
  }

  /**
   * Holds `context` under `key`, unless its profile was erased after `readSince` (the `moment()` noted
   * before the read it came from): then the read saw the profile before the erasure and nothing is held.
   */
  set(key: string, context: HeldContext, readSince: number): void {
    this.delete(key);
    if (this.erasedSince(context.profileId, readSince)) return;
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

  /**
   * Drops every entry of this profile (erased: its data is not kept in memory either), and keeps any
   * read that began before from holding it again.
   */
  forgetProfile(profileId: string): void {
    this.erasedAt.delete(profileId);
    this.erasedAt.set(profileId, ++this.erasures);
    for (const [oldest, erasure] of this.erasedAt) {
      if (this.erasedAt.size <= REMEMBERED_ERASURES) break;
      this.erasedAt.delete(oldest);
      this.forgottenErasuresThrough = erasure;
    }
    for (const [key, entry] of this.entries) {
      if (entry.context.profileId === profileId) this.delete(key);
    }
  }

  private erasedSince(profileId: string, moment: number): boolean {
    if (moment === this.erasures) return false;
    const erased = this.erasedAt.get(profileId);
    return erased === undefined ? this.forgottenErasuresThrough > moment : erased > moment;
  }

  get size(): number {
    return this.entries.size;
  }
}

function sizeOf(context: HeldContext): number {
  if (context.kind === 'large') return ENTRY_OVERHEAD_BYTES;
  let bytes = ENTRY_OVERHEAD_BYTES + 2 * context.summary.length;
  for (const trait of context.traits) bytes += ROW_OVERHEAD_BYTES + 2 * JSON.stringify(trait).length;
  if (context.kind === 'whole') {
    const held = context.memories;
    return (
      bytes + held.count * ROW_OVERHEAD_BYTES + held.wordCount * WORD_OVERHEAD_BYTES + 2 * held.textLength
    );
  }
  for (const memory of context.memories) bytes += ROW_OVERHEAD_BYTES + 2 * memory.content.length;
  return bytes;
}

/** The share of CONTEXT_HELD_TRUST_MS by which a held copy's trust may be cut short, at random. */
export const HELD_TRUST_JITTER = 0.25;

/**
 * Until when a copy confirmed by a read that began at `confirmedAt` may be used without asking: between
 * 75 % and all of `trustMs` later, at random, so that copies confirmed together (all of them, after a
 * start or a busy second) are not all asked about again in the same moment. `random` is in [0, 1).
 */
export function heldTrustUntil(confirmedAt: number, trustMs: number, random = Math.random()): number {
  return confirmedAt + trustMs * (1 - HELD_TRUST_JITTER * random);
}
