import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The form of an application key: `pms_<prefix>_<secret>`, 48 random bits of prefix and 256 of secret. */
const KEY_FORM = /^pms_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface NewKeySecret {
  prefix: string;
  /** The whole key, shown once. */
  secret: string;
  hash: Buffer;
}

export function newKeySecret(): NewKeySecret {
  const prefix = randomBytes(6).toString('hex');
  const secret = `pms_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { prefix, secret, hash: hashOf(secret) };
}

/** The prefix of a token shaped as an application key, else null. */
export function keyPrefixOf(token: string): string | null {
  return KEY_FORM.exec(token)?.[1] ?? null;
}

export function looksLikeApplicationKey(token: string): boolean {
  return token.startsWith('pms_');
}

/** A SHA-256 of the whole key: its 256 random bits make a slow hash needless. */
export function hashOf(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Whether the token is the key of this hash, in time that does not depend on where they differ. */
export function matchesHash(token: string, hash: Buffer): boolean {
  const digest = hashOf(token);
  return digest.length === hash.length && timingSafeEqual(digest, hash);
}
