import { Injectable } from '@nestjs/common';
import { BackgroundWork } from '../common/background-work';
import { ApiKeysRepository, VerifiableApiKey } from './api-keys.repository';
import { ApplicationsRepository, StoredApplication } from './applications.repository';
import { keyPrefixOf, matchesHash } from './key-secrets';

/**
 * How long a replica trusts what it read of a key or an application. A revoked key is refused by every
 * replica within this time plus one query.
 */
export const KEY_CACHE_MS = 500;
/** lastUsedAt is written at most this often per key and replica. */
const LAST_USED_EVERY_MS = 30_000;
/** Unknown prefixes are cached too (a flood of made-up keys costs one query per prefix); past this, all is forgotten. */
const MAX_CACHED = 10_000;

interface Cached<T> {
  value: T;
  readAt: number;
}

/**
 * Values read from the database and trusted for KEY_CACHE_MS. The requests that find an entry missing
 * or stale while it is being read wait for that one read: under load every in-flight request meets
 * the expiry together, and each reading again would send the same query dozens of times.
 */
class TrustedReads<T> {
  private readonly held = new Map<string, Cached<T>>();
  private readonly reading = new Map<string, Promise<T>>();

  get(id: string, read: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const held = this.held.get(id);
    if (held !== undefined && now - held.readAt < KEY_CACHE_MS) return Promise.resolve(held.value);
    const underWay = this.reading.get(id);
    if (underWay !== undefined) return underWay;
    const reading = read()
      .then((value) => {
        if (this.held.size >= MAX_CACHED) this.held.clear();
        this.held.set(id, { value, readAt: now });
        return value;
      })
      .finally(() => this.reading.delete(id));
    this.reading.set(id, reading);
    return reading;
  }
}

/** Checks application keys and finds applications, each read from the database at most every KEY_CACHE_MS. */
@Injectable()
export class KeyVerifier {
  private readonly keys = new TrustedReads<VerifiableApiKey | null>();
  private readonly applications = new TrustedReads<StoredApplication | null>();
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly keysRepository: ApiKeysRepository,
    private readonly applicationsRepository: ApplicationsRepository,
    private readonly background: BackgroundWork,
  ) {}

  /** The key this token is, when it is a live key (known, matching, not revoked, not expired); else null. */
  async verify(token: string): Promise<VerifiableApiKey | null> {
    const prefix = keyPrefixOf(token);
    if (prefix === null) return null;
    const key = await this.keys.get(prefix, () => this.keysRepository.findByPrefix(prefix));
    if (key === null || !matchesHash(token, key.secretHash)) return null;
    if (key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt.getTime() <= Date.now()))
      return null;
    this.noteUse(key.id);
    return key;
  }

  application(idOrName: string): Promise<StoredApplication | null> {
    return this.applications.get(idOrName, () => this.applicationsRepository.find(idOrName));
  }

  private noteUse(keyId: string): void {
    const now = Date.now();
    if (now - (this.touched.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
    if (this.touched.size >= MAX_CACHED) this.touched.clear();
    this.touched.set(keyId, now);
    this.background.run('key last use', () => this.keysRepository.touch(keyId));
  }
}
