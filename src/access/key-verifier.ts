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

/** Checks application keys and finds applications, each read from the database at most every KEY_CACHE_MS. */
@Injectable()
export class KeyVerifier {
  private readonly keys = new Map<string, Cached<VerifiableApiKey | null>>();
  private readonly applications = new Map<string, Cached<StoredApplication | null>>();
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
    const key = await this.cached(this.keys, prefix, () => this.keysRepository.findByPrefix(prefix));
    if (key === null || !matchesHash(token, key.secretHash)) return null;
    if (key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt.getTime() <= Date.now()))
      return null;
    this.noteUse(key.id);
    return key;
  }

  application(idOrName: string): Promise<StoredApplication | null> {
    return this.cached(this.applications, idOrName, () => this.applicationsRepository.find(idOrName));
  }

  private async cached<T>(cache: Map<string, Cached<T>>, id: string, read: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const held = cache.get(id);
    if (held !== undefined && now - held.readAt < KEY_CACHE_MS) return held.value;
    const value = await read();
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(id, { value, readAt: now });
    return value;
  }

  private noteUse(keyId: string): void {
    const now = Date.now();
    if (now - (this.touched.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
    if (this.touched.size >= MAX_CACHED) this.touched.clear();
    this.touched.set(keyId, now);
    this.background.run('key last use', () => this.keysRepository.touch(keyId));
  }
}
