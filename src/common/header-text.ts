import { invalidField } from './api-error';

/**
 * A request header as text. Node reads header bytes as Latin-1; clients send UTF-8, so the bytes are
 * decoded again as UTF-8 and an id in a header matches the same id sent in JSON. Bytes that are not
 * UTF-8 are refused rather than guessed at.
 */
export function headerText(
  value: string | string[] | undefined,
  name: string,
  code: string,
): string | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  if (!/[^\p{ASCII}]/u.test(raw)) return raw;
  const decoded = Buffer.from(raw, 'latin1').toString('utf8');
  if (decoded.includes('\ufffd') && !raw.includes('\ufffd')) {
    throw invalidField(name, code, `${name} must be UTF-8 text.`);
  }
  return decoded;
}
