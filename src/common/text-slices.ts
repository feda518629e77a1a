import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';

/**
 * Characters encoded (or bytes decoded) in one task when a long text changes form: about a
 * millisecond of work, so that a message of megabytes never holds the event loop for long at a time
 * and other requests (`/health` among them) are answered in between.
 */
export const TEXT_SLICE = 256 * 1024;

/**
 * Resolves in a later turn of the event loop, once it has handled the I/O that is ready. Two
 * `setImmediate` hops: a single one, asked for from an I/O callback, runs in the same turn, before
 * any new I/O is read.
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** Synchronous work that long work does in one task before it lets the event loop turn. */
export const TASK_BUDGET_MS = 3;

/**
 * The clock of long work done in steps (sentences, rows): after each step, `due()` says whether the
 * task has had its TASK_BUDGET_MS, and `pause()` lets the event loop turn before the next step. Work
 * shorter than the budget is done in the task it starts in.
 */
export class TaskBudget {
  private sliceStart = performance.now();

  due(): boolean {
    return performance.now() - this.sliceStart >= TASK_BUDGET_MS;
  }

  async pause(): Promise<void> {
    await nextTask();
    this.sliceStart = performance.now();
  }
}

/**
 * The UTF-8 bytes of `JSON.stringify(value)` (`value` plain JSON). A value without a string longer than
 * TEXT_SLICE is serialised at once; otherwise its long strings are escaped and encoded TEXT_SLICE
 * characters per task, straight into the bytes, so that no task serialises or encodes a whole message
 * and the whole text never exists as one string. A slice never ends between the two halves of a
 * surrogate pair, so the pieces escape as the whole string does.
 */
export async function jsonBytes(value: unknown): Promise<Buffer> {
  if (!hasLongString(value)) return Buffer.from(JSON.stringify(value));
  const marker = `long-text-${randomUUID()}`;
  const long: string[] = [];
  const skeleton = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== 'string' || item.length <= TEXT_SLICE) return item;
    long.push(item);
    return marker;
  });
  const between = skeleton.split(`"${marker}"`);
  const pieces: string[] = [between[0]];
  for (let i = 0; i < long.length; i++) {
    pieces.push('"');
    for (const slice of slices(long[i])) {
      await nextTask();
      pieces.push(JSON.stringify(slice).slice(1, -1));
    }
    pieces.push('"', between[i + 1]);
  }
  let length = 0;
  for (const piece of pieces) length += Buffer.byteLength(piece);
  const bytes = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const piece of pieces) {
    if (piece.length > 1) await nextTask();
    offset += bytes.write(piece, offset);
  }
  return bytes;
}

/**
 * UTF-8 text received in chunks, decoded as they come once it passes TEXT_SLICE bytes, so that a long
 * body is not decoded in one task; `text()` gives it whole (as `Buffer.toString` does: invalid bytes as
 * U+FFFD, a byte order mark kept).
 */
export class ChunkedUtf8Text {
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  private decoder: StringDecoder | undefined;
  private readonly decoded: string[] = [];

  /** Whether the text is long enough to have been decoded piece by piece. */
  get long(): boolean {
    return this.decoder !== undefined;
  }

  add(chunk: Buffer): void {
    if (this.decoder !== undefined) {
      this.decoded.push(this.decoder.write(chunk));
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= TEXT_SLICE) {
      this.decoder = new StringDecoder('utf8');
      this.decoded.push(this.decoder.write(this.takePending()));
    }
  }

  text(): string {
    if (this.decoder === undefined) return this.takePending().toString('utf8');
    this.decoded.push(this.decoder.end());
    return this.decoded.join('');
  }

  private takePending(): Buffer {
    const bytes =
      this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending.length = 0;
    this.pendingBytes = 0;
    return bytes;
  }
}

/** Whether a string longer than TEXT_SLICE is anywhere in `value`. */
function hasLongString(value: unknown): boolean {
  if (typeof value === 'string') return value.length > TEXT_SLICE;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasLongString);
  for (const key in value) if (hasLongString((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** `text` in pieces of at most TEXT_SLICE characters, none ending between the halves of a surrogate pair. */
function* slices(text: string): Generator<string> {
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + TEXT_SLICE, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield text.slice(start, end);
    start = end;
  }
}
