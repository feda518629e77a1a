import { sortShort } from '../common/sort-short';
import {
  BM25_B,
  BM25_K1,
  COMMON_WORD_MEMORIES,
  corpusSize,
  LINK_SHARE,
  LINK_WORD_MEMORIES,
  LINK_WORDS,
  PROXIMITY_ANCHORS,
  PROXIMITY_NEIGHBOURS,
  PROXIMITY_SHARE,
  PROXIMITY_WINDOW_MINUTES,
  RetrievedMemory,
} from './memory-candidates';
import { MemoryType } from './memory.entity';

/** A word of the question as the database split and stemmed it (memoryCandidatesSql's `units`). */
export interface QuestionUnit {
  unit: string;
  exact: string;
  stem: string | null;
}

/** A memory row as the context statement hands over a small profile's memories whole. */
export interface HeldMemoryRow {
  id: string;
  /** The row's version (its xmin): a memory of the same id and version is the same memory. */
  version: string;
  /** Null for a superseded memory: it only counts in word rarity. */
  content: string | null;
  type: MemoryType;
  importance: number;
  decay_factor: number;
  created_at: string;
  last_accessed_at: string | null;
  /** created_at in microseconds since the epoch (a Date holds milliseconds only), as text. */
  created_us: string;
  superseded: boolean;
  /** The words of its search vector. */
  lexemes: string[];
}

interface HeldMemory {
  memory: RetrievedMemory;
  /** The `candidates` call that last brought it for a question (a number of candidatesCalls). */
  broughtIn: number;
  /** `id=version`, as the held statement names the rows held. */
  idVersion: string;
  createdUs: number;
  superseded: boolean;
  /** The words of its search vector, each once. */
  words: readonly string[];
  /** Its words longest first (as `longestFirst`), worked out when it first anchors links. */
  longestWords?: readonly string[];
  /**
   * What the `candidates` call numbered `matchedIn` worked out for it: its BM25 length saturation and
   * rank, the last question unit that counted for it, and the rank and anchor it is brought with.
   * Kept on the memory, where maps and sets made for each call cost most of the ranking.
   */
  matchedIn: number;
  saturation: number;
  rank: number;
  countedUnit: number;
  nearIn: number;
  nearRank: number;
  nearAnchor: HeldMemory | null;
  broughtRank: number;
  broughtAnchor: HeldMemory | null;
}

const WINDOW_US = PROXIMITY_WINDOW_MINUTES * 60 * 1_000_000;

/** Newest first, then the greater id (the order of PostgreSQL's uuid comparison, bytes as hex). */
function newerFirst(a: HeldMemory, b: HeldMemory): number {
  return b.createdUs - a.createdUs || (a.memory.id < b.memory.id ? 1 : a.memory.id > b.memory.id ? -1 : 0);
}

/**
 * A memory the database names that was neither sent nor held: the held statement sends every memory
 * whose version the caller does not hold, so this means the two disagree, and the profile is read whole.
 */
export class IncompleteHeldCopy extends Error {
  constructor(idVersion: string) {
    super(`memory ${idVersion} was neither sent nor held`);
  }
}

/** Calls of `candidates` so far, in every held profile: each marks what its question brought. */
let candidatesCalls = 0;
/** Question units counted so far, in every call: each unit's number marks the memories it counted for. */
let unitsCounted = 0;

/** The memory as a question brought it: its rank for the question, and the match it was found next to. */
function withRank(memory: RetrievedMemory, textRank: number, anchorId: string | null): RetrievedMemory {
  return {
    id: memory.id,
    content: memory.content,
    type: memory.type,
    importance: memory.importance,
    decayFactor: memory.decayFactor,
    createdAt: memory.createdAt,
    lastAccessedAt: memory.lastAccessedAt,
    textRank,
    vectorSimilarity: memory.vectorSimilarity,
    anchorId,
  };
}

function accessedAt(row: HeldMemoryRow): Date | null {
  return row.last_accessed_at === null ? null : new Date(row.last_accessed_at);
}

/** Whether the row is the held memory but for when it was last accessed (and its version). */
function differsOnlyInAccess(held: HeldMemory, row: HeldMemoryRow): boolean {
  const { memory } = held;
  if (
    (row.content ?? '') !== memory.content ||
    row.type !== memory.type ||
    row.importance !== memory.importance ||
    row.decay_factor !== memory.decayFactor ||
    Number(row.created_us) !== held.createdUs ||
    row.superseded !== held.superseded
  ) {
    return false;
  }
  const words = distinctLexemes(row);
  return words.length === held.words.length && words.every((word, i) => word === held.words[i]);
}

/** The words of a memory's search vector, each once, in the order the row gives them. */
function distinctLexemes(row: HeldMemoryRow): string[] {
  return [...new Set(row.lexemes)];
}

/** A memory held from its row; null when its creation time cannot be held exactly. */
function heldMemory(row: HeldMemoryRow): HeldMemory | null {
  const createdUs = Number(row.created_us);
  if (!Number.isSafeInteger(createdUs)) return null;
  return {
    broughtIn: 0,
    memory: {
      id: row.id,
      content: row.content ?? '',
      type: row.type,
      importance: row.importance,
      decayFactor: row.decay_factor,
      createdAt: new Date(row.created_at),
      lastAccessedAt: accessedAt(row),
      textRank: 0,
      vectorSimilarity: null,
      anchorId: null,
    },
    idVersion: `${row.id}=${row.version}`,
    createdUs,
    superseded: row.superseded,
    words: distinctLexemes(row),
    matchedIn: 0,
    saturation: 0,
    rank: 0,
    countedUnit: 0,
    nearIn: 0,
    nearRank: 0,
    nearAnchor: null,
    broughtRank: 0,
    broughtAnchor: null,
  };
}

/**
 * A small profile's memories held in the process, which yield the same candidates for a question as
 * memoryCandidatesSql does for a profile below its word-scan limit: BM25 over the words the database
 * found in the question and in each memory, the neighbours in time of the strongest matches and the
 * memories linked to them by a rare word, the most important and the most recent memories. The
 * database then only confirms, by its fingerprint, that what is held is what it holds, and splits the
 * question into words (its stemmer and stop words are the memories' own). Equal ranks are ordered by
 * id, as in the SQL.
 */
export class HeldMemoryCandidates {
  private readonly all: HeldMemory[];
  /** Current memories by time, oldest first: the neighbours of a match are its neighbours here. */
  private readonly byTime: HeldMemory[];
  private readonly position = new Map<string, number>();
  /** Every memory (superseded too) holding each word: how rare the word is in the profile. */
  private readonly postings = new Map<string, HeldMemory[]>();
  private readonly standingBySize = new Map<number, HeldMemory[]>();
  private idVersions: readonly string[] | undefined;
  private idVersionList: string | undefined;
  private byId: Map<string, HeldMemory> | undefined;

  private constructor(all: HeldMemory[]) {
    this.all = all;
    this.byTime = all.filter((held) => !held.superseded).sort((a, b) => newerFirst(b, a));
    this.byTime.forEach((held, i) => this.position.set(held.memory.id, i));
    for (const held of all) {
      for (const word of held.words) {
        const list = this.postings.get(word);
        if (list) list.push(held);
        else this.postings.set(word, [held]);
      }
    }
  }

  /**
   * The memories of `rows`; null when a creation time cannot be held exactly (beyond about 285 years
   * from 1970).
   */
  static from(rows: HeldMemoryRow[]): HeldMemoryCandidates | null {
    const all: HeldMemory[] = [];
    for (const row of rows) {
      const held = heldMemory(row);
      if (held === null) return null;
      all.push(held);
    }
    return new HeldMemoryCandidates(all);
  }

  /**
   * The profile's memories now, from the rows of the ones that changed and these for the rest:
   * `versions` names every memory the profile has (`id=version`, comma-separated), and each one not in
   * `changed` must be held here at that version (else IncompleteHeldCopy). Null as `from`.
   */
  updated(changed: HeldMemoryRow[], versions: string): HeldMemoryCandidates | null {
    if (this.tookTouches(changed, versions)) return this;
    const sent = new Map<string, HeldMemoryRow>(changed.map((row) => [`${row.id}=${row.version}`, row]));
    const kept = new Map(this.all.map((held) => [held.idVersion, held]));
    const all: HeldMemory[] = [];
    for (const idVersion of versions === '' ? [] : versions.split(',')) {
      const row = sent.get(idVersion);
      const held = row ? heldMemory(row) : kept.get(idVersion);
      if (held === null) return null;
      if (held === undefined) throw new IncompleteHeldCopy(idVersion);
      all.push(held);
    }
    return new HeldMemoryCandidates(all);
  }

  /**
   * Takes the rows sent in place when the profile has the same memories and each row sent differs from
   * the memory held only in when it was last accessed (a touch gives a memory a new version and changes
   * nothing the words, times and order held here are built from): those memories take their new time
   * and version, and this copy serves on. False, with nothing changed, otherwise.
   */
  private tookTouches(changed: HeldMemoryRow[], versions: string): boolean {
    const names = versions === '' ? [] : versions.split(',');
    if (changed.length === 0 || names.length !== this.all.length) return false;
    this.byId ??= new Map(this.all.map((held) => [held.memory.id, held]));
    const touched: HeldMemory[] = [];
    for (const row of changed) {
      const held = this.byId.get(row.id);
      if (held === undefined || !differsOnlyInAccess(held, row)) return false;
      touched.push(held);
    }
    const sent = new Set(changed.map((row) => `${row.id}=${row.version}`));
    const kept = new Set(this.versions);
    if (!names.every((name) => sent.has(name) || kept.has(name))) return false;
    changed.forEach((row, i) => {
      touched[i].idVersion = `${row.id}=${row.version}`;
      touched[i].memory = { ...touched[i].memory, lastAccessedAt: accessedAt(row) };
    });
    this.idVersions = undefined;
    this.idVersionList = undefined;
    return true;
  }

  /** Each memory's `id=version`: what the held statement need not send again. */
  get versions(): readonly string[] {
    this.idVersions ??= this.all.map((held) => held.idVersion);
    return this.idVersions;
  }

  /**
   * `versions` comma-separated, as the held statement takes them: one text parameter, made once per
   * copy, where an array parameter would be escaped element by element on every chat.
   */
  get versionList(): string {
    this.idVersionList ??= this.versions.join(',');
    return this.idVersionList;
  }

  get count(): number {
    return this.all.length;
  }

  /** Words held, each memory's counted apart. */
  get wordCount(): number {
    let words = 0;
    for (const held of this.all) words += held.words.length;
    return words;
  }

  /** Characters held: contents and words. */
  get textLength(): number {
    let length = 0;
    for (const held of this.all) {
      length += held.memory.content.length;
      for (const word of held.words) length += word.length;
    }
    return length;
  }

  /**
   * The memories the question brings, with their ranks (and the match a neighbour's rank comes from),
   * then the standing ones it did not bring, each source cut at `perSource`.
   */
  candidates(units: QuestionUnit[], perSource: number): RetrievedMemory[] {
    if (perSource <= 0) return [];
    // what the question brought is marked with this call: the standing ones are told from it without a set
    const call = ++candidatesCalls;
    const candidates = this.questionCandidates(units, perSource, call);
    for (const held of this.standing(perSource)) if (held.broughtIn !== call) candidates.push(held.memory);
    return candidates;
  }

  /** The most important (importance × decay, as PostgreSQL multiplies reals), then the most recent. */
  private standing(perSource: number): HeldMemory[] {
    const known = this.standingBySize.get(perSource);
    if (known) return known;
    const weight = (held: HeldMemory) =>
      Math.fround(Math.fround(held.memory.importance) * Math.fround(held.memory.decayFactor));
    const important = [...this.byTime]
      .sort((a, b) => weight(b) - weight(a) || newerFirst(a, b))
      .slice(0, perSource);
    const chosen = new Set(important);
    const recent = [...this.byTime]
      .reverse()
      .slice(0, perSource)
      .filter((held) => !chosen.has(held));
    const standing = [...important, ...recent];
    this.standingBySize.set(perSource, standing);
    return standing;
  }

  /** The memories the question brings, each marked as brought in `call`. */
  private questionCandidates(units: QuestionUnit[], perSource: number, call: number): RetrievedMemory[] {
    const words = this.questionWords(units);
    // selected by the uncommon words (by all of them when every word is common), scored by all
    const selective = words.some((word) => word.selective);
    const matched: HeldMemory[] = [];
    let lengths = 0;
    for (const word of words) {
      if (selective && !word.selective) continue;
      for (const held of word.postings) {
        if (held.superseded || held.matchedIn === call) continue;
        held.matchedIn = call;
        held.saturation = 0;
        held.rank = 0;
        matched.push(held);
        lengths += held.words.length;
      }
    }
    if (matched.length === 0) return [];
    const averageLength = Math.max(lengths / matched.length, 1);
    // a unit counts once per memory, with the rarest of its forms the memory has (its words come rarest
    // first), and the units are added up in their order
    let unit = 0;
    for (let i = 0; i < words.length; i++) {
      if (i === 0 || words[i].unit !== words[i - 1].unit) unit = ++unitsCounted;
      const { idf, postings } = words[i];
      for (const held of postings) {
        if (held.matchedIn !== call || held.countedUnit === unit) continue;
        held.countedUnit = unit;
        held.saturation ||= 1 + BM25_K1 * (1 - BM25_B + (BM25_B * held.words.length) / averageLength);
        held.rank += (idf * (BM25_K1 + 1)) / held.saturation;
      }
    }
    sortShort(matched, (a, b) => b.rank - a.rank || (a.memory.id < b.memory.id ? -1 : 1));
    if (matched.length > perSource) matched.length = perSource;

    const brought: HeldMemory[] = [];
    for (const held of matched) {
      held.broughtIn = call;
      held.broughtRank = held.rank;
      held.broughtAnchor = null;
      brought.push(held);
    }
    // the neighbours in time of the strongest matches, with a share of the strongest anchor's rank
    const neighbours: HeldMemory[] = [];
    for (let a = 0; a < Math.min(PROXIMITY_ANCHORS, matched.length); a++) {
      const anchor = matched[a];
      const rank = anchor.rank * PROXIMITY_SHARE;
      const at = this.position.get(anchor.memory.id)!;
      for (let step = -1; step <= 1; step += 2) {
        for (let i = at + step, taken = 0; taken < PROXIMITY_NEIGHBOURS; i += step, taken++) {
          const near = this.byTime[i];
          if (!near || Math.abs(near.createdUs - anchor.createdUs) > WINDOW_US) break;
          if (near.nearIn !== call) {
            near.nearIn = call;
            neighbours.push(near);
          } else if (near.nearRank >= rank) continue;
          near.nearRank = rank;
          near.nearAnchor = anchor;
        }
      }
    }
    for (const near of neighbours) {
      if (near.broughtIn === call) {
        if (near.broughtRank >= near.nearRank) continue;
      } else {
        near.broughtIn = call;
        brought.push(near);
      }
      near.broughtRank = near.nearRank;
      near.broughtAnchor = near.nearAnchor;
    }
    for (const { held, rank, anchor } of this.linked(matched, units, perSource)) {
      if (held.broughtIn === call) {
        if (held.broughtRank >= rank) continue;
      } else {
        held.broughtIn = call;
        brought.push(held);
      }
      held.broughtRank = rank;
      held.broughtAnchor = anchor;
    }
    return brought.map((held) =>
      withRank(held.memory, held.broughtRank, held.broughtAnchor?.memory.id ?? null),
    );
  }

  /**
   * The memories linked to the strongest matches (`matched`, strongest first) by a rare word: of each
   * anchor's LINK_WORDS longest words that are not the question's, those that at least two and at most
   * LINK_WORD_MEMORIES of the profile's memories have. Each current memory with one (other than that
   * anchor) gets LINK_SHARE of its strongest such anchor's rank; the first `perSource` of them, by rank
   * then id. (A held profile is below LINK_PROFILE_LIMIT: WORD_SCAN_LIMIT is lower.)
   */
  private linked(
    matched: readonly HeldMemory[],
    units: readonly QuestionUnit[],
    perSource: number,
  ): Array<{ held: HeldMemory; rank: number; anchor: HeldMemory }> {
    const own = new Set<string>();
    for (const { exact, stem } of units) {
      own.add(exact);
      if (stem !== null) own.add(stem);
    }
    const links = new Map<HeldMemory, { held: HeldMemory; rank: number; anchor: HeldMemory }>();
    for (let a = 0; a < Math.min(PROXIMITY_ANCHORS, matched.length); a++) {
      const anchor = matched[a];
      const rank = anchor.rank * LINK_SHARE;
      anchor.longestWords ??= longestFirst(anchor.words);
      let taken = 0;
      for (const word of anchor.longestWords) {
        if (own.has(word)) continue;
        if (++taken > LINK_WORDS) break;
        const postings = this.postings.get(word);
        if (postings === undefined || postings.length < 2 || postings.length > LINK_WORD_MEMORIES) continue;
        for (const held of postings) {
          if (held.superseded || held === anchor) continue;
          const known = links.get(held);
          if (known === undefined) links.set(held, { held, rank, anchor });
          else if (known.rank < rank) Object.assign(known, { rank, anchor });
        }
      }
    }
    const linked = [...links.values()].sort(
      (x, y) => y.rank - x.rank || (x.held.memory.id < y.held.memory.id ? -1 : 1),
    );
    if (linked.length > perSource) linked.length = perSource;
    return linked;
  }

  /**
   * The question's words the profile has, with their rarity in it (a common word's count stops at the
   * cap: half the memories): each unit's forms together, in the units' order, rarest first.
   */
  private questionWords(units: QuestionUnit[]): QuestionWord[] {
    const words: QuestionWord[] = [];
    for (let u = 0; u < units.length; u++) {
      const unit = units[u].unit;
      // units that share their text are one unit, where the first of them is
      if (firstWithText(units, unit) < u) continue;
      const first = words.length;
      for (let v = u; v < units.length; v++) {
        if (units[v].unit !== unit) continue;
        this.addWord(words, first, unit, units[v].exact);
        const stem = units[v].stem;
        if (stem !== null) this.addWord(words, first, unit, stem);
      }
    }
    return words;
  }

  /** `lexeme` as a word of `unit` (whose words start at `first`), rarest first, unless it is one already. */
  private addWord(words: QuestionWord[], first: number, unit: string, lexeme: string): void {
    for (let i = first; i < words.length; i++) if (words[i].lexeme === lexeme) return;
    const postings = this.postings.get(lexeme);
    if (postings === undefined) return;
    const found = postings.length;
    // the profile (superseded memories too) is the corpus, as in the SQL
    const corpus = corpusSize(this.all.length);
    const df = found >= COMMON_WORD_MEMORIES ? Math.max(COMMON_WORD_MEMORIES, Math.trunc(corpus / 2)) : found;
    const idf = Math.log(1 + (corpus - df + 0.5) / (df + 0.5));
    let at = words.length;
    words.push({ unit, lexeme, idf, postings, selective: found < COMMON_WORD_MEMORIES });
    for (; at > first && words[at - 1].idf < idf; at--)
      [words[at - 1], words[at]] = [words[at], words[at - 1]];
  }
}

/**
 * `words` longest first, by length in characters, then in code-point order (as PostgreSQL orders them
 * under the "C" collation).
 */
function longestFirst(words: readonly string[]): string[] {
  const points = words.map((word) => ({ word, points: Array.from(word, (char) => char.codePointAt(0)!) }));
  points.sort((x, y) => y.points.length - x.points.length || compareCodePoints(x.points, y.points));
  return points.map(({ word }) => word);
}

function compareCodePoints(x: readonly number[], y: readonly number[]): number {
  for (let i = 0; i < x.length && i < y.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

function firstWithText(units: QuestionUnit[], unit: string): number {
  let i = 0;
  while (units[i].unit !== unit) i++;
  return i;
}

/** A word of the question that the profile's memories have. */
interface QuestionWord {
  unit: string;
  lexeme: string;
  idf: number;
  postings: HeldMemory[];
  /** Found in fewer than COMMON_WORD_MEMORIES memories: it selects the matches. */
  selective: boolean;
}
