import { HttpStatus } from '@nestjs/common';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from './api-error';
import { parseJsonBodyText } from './json-body-text';
import { JsonBodyParseError, JsonParseThread } from './json-parse-thread';
import { ChunkedUtf8Text, nextTask } from './text-slices';

/** Deeper JSON than this is refused before any code walks it recursively. */
export const MAX_JSON_DEPTH = 64;

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * JSON body parsing with our own errors: malformed JSON, bodies over the limit, other media types and
 * bodies that are not a JSON object all become envelope errors instead of the framework's defaults.
 *
 * The common request (a JSON body of a declared length within the limit, not compressed) is read here
 * (readDeclaredJson); every other one goes to body-parser (`express.json`), which inflates compressed
 * bodies, reads chunked ones, and reads off the rest of a body over the limit before its 413. Both
 * give the same body and the same errors (a test sends each body both ways). A body large enough for
 * `thread` to want it is parsed there, whichever way it came: body-parser hands its bytes over before
 * its own parse (from `verify`, its one hook between reading a body and parsing it).
 */
export function jsonBodyParser(limitBytes: number, thread: JsonParseThread): RequestHandler[] {
  const parseJson = express.json({
    limit: limitBytes,
    strict: true,
    type: isJsonContentType,
    verify: (_req, _res, body) => {
      if (thread.wants(body.length)) throw new BodyForThread(body);
    },
  });
  return [
    (req: Request, _res: Response, next: NextFunction) => next(checkCharset(req)),
    (req: Request, res: Response, next: NextFunction) => {
      const done = (error?: unknown) =>
        next(error === undefined ? undefined : toParseError(error, limitBytes));
      const length = declaredLengthWithin(req, limitBytes);
      if (length === null) {
        parseJson(req, res, (error?: unknown) =>
          error instanceof BodyForThread ? parseOnThread(req, error.bytes, thread, done) : done(error),
        );
      } else if (thread.wants(length)) readDeclaredJsonOnThread(req, length, thread, done);
      else readDeclaredJson(req, length, done);
    },
    (req: Request, _res: Response, next: NextFunction) => next(checkParsedBody(req)),
  ];
}

/**
 * The body's length when this parser reads it itself: a JSON body in UTF-8 (no charset, or `utf-8`), not
 * compressed, not chunked, of a declared length within the limit, on a request whose body is still to
 * come. Null for the rest.
 */
function declaredLengthWithin(req: Request, limitBytes: number): number | null {
  const { headers } = req;
  const declared = headers['content-length'];
  if (declared === undefined || headers['transfer-encoding'] !== undefined || !isJsonContentType(req)) {
    return null;
  }
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return null;
  // body-parser refuses every charset but `utf-…` ones, `utf8` among them (checkCharset passes it)
  const charset = charsetOf(headers['content-type']!);
  if (charset !== undefined && charset !== 'utf-8') return null;
  if (!/^\d{1,15}$/.test(declared) || req.complete || !req.readable) return null;
  const length = Number(declared);
  return length <= limitBytes ? length : null;
}

/**
 * Reads a body of `length` bytes and parses it as body-parser does with `strict`: UTF-8 without its
 * byte order mark, an empty body as `{}`, otherwise an object or array. Errors carry body-parser's
 * types, for toParseError. A long body is decoded as its chunks arrive and parsed in a task of its
 * own: its decoding and its parse are never one long task.
 */
function readDeclaredJson(req: Request, length: number, done: (error?: unknown) => void): void {
  const body = new ChunkedUtf8Text();
  const parse = (text: string) => {
    try {
      req.body = parseJsonBodyText(text);
    } catch {
      return done({ type: 'entity.parse.failed' });
    }
    done();
  };
  readDeclaredBody(
    req,
    length,
    (chunk) => body.add(chunk),
    done,
    () => {
      const text = body.text();
      // a long body's parse is a task of its own, apart from the joining of its decoded pieces
      if (body.long) void nextTask().then(() => parse(text));
      else parse(text);
    },
  );
}

/**
 * Reads a body of `length` bytes into one buffer as its chunks arrive and has `thread` decode and parse
 * it as readDeclaredJson does: the event loop neither decodes nor parses it.
 */
function readDeclaredJsonOnThread(
  req: Request,
  length: number,
  thread: JsonParseThread,
  done: (error?: unknown) => void,
): void {
  const bytes = new Uint8Array(length);
  readDeclaredBody(
    req,
    length,
    (chunk, offset) => bytes.set(chunk, offset),
    done,
    () => parseOnThread(req, bytes, thread, done),
  );
}

/** The body in `bytes` (handed over) parsed on `thread` into `req.body`, with body-parser's error types. */
function parseOnThread(
  req: Request,
  bytes: Uint8Array,
  thread: JsonParseThread,
  done: (error?: unknown) => void,
): void {
  thread.parse(bytes).then(
    (value) => {
      req.body = value;
      done();
    },
    (error: unknown) =>
      done(
        error instanceof JsonBodyParseError
          ? { type: 'entity.parse.failed' }
          : { type: 'thread.failed', error },
      ),
  );
}

/** body-parser's bytes of a body that `thread` parses, thrown from its `verify` hook to skip its parse. */
class BodyForThread extends Error {
  constructor(readonly bytes: Buffer) {
    super('parsed on the JSON parsing thread');
  }
}

/**
 * Hands each chunk of a body of `length` bytes to `add` (with its offset, never past `length`), then
 * calls `complete` once the body has come whole, or `done` with body-parser's error type when it is
 * cut off or longer than declared.
 */
function readDeclaredBody(
  req: Request,
  length: number,
  add: (chunk: Buffer, offset: number) => void,
  done: (error?: unknown) => void,
  complete: () => void,
): void {
  req.body = undefined;
  let received = 0;
  const detach = () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('aborted', onAborted);
    req.off('error', onAborted);
    req.off('close', onClose);
  };
  const finish = (error?: unknown) => {
    detach();
    done(error);
  };
  const onData = (chunk: Buffer) => {
    if (received + chunk.length <= length) add(chunk, received);
    received += chunk.length;
  };
  const onEnd = () => {
    if (received !== length) return finish({ type: 'request.size.invalid' });
    detach();
    complete();
  };
  const onAborted = () => finish({ type: 'request.aborted' });
  const onClose = () => {
    if (!req.complete) onAborted();
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('aborted', onAborted);
  req.on('error', onAborted);
  req.on('close', onClose);
}

/** The charset parameter of a Content-Type, lower-cased, or undefined when there is none. */
function charsetOf(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return match?.[1].toLowerCase();
}

function isJsonContentType(req: { headers: Record<string, string | string[] | undefined> }): boolean {
  const contentType = req.headers['content-type'];
  return typeof contentType === 'string' && /^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(contentType);
}

/** JSON bodies are UTF-8: any other declared charset is refused with 415, whatever it is. */
function checkCharset(req: Request): ApiError | undefined {
  const contentType = req.headers['content-type'];
  if (typeof contentType !== 'string' || !isJsonContentType(req)) return undefined;
  const charset = charsetOf(contentType);
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return undefined;
  return unsupportedCharset();
}

function unsupportedCharset(): ApiError {
  return new ApiError(
    HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    'unsupported_media_type',
    'The request body must be JSON in UTF-8.',
  );
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function checkParsedBody(req: Request): ApiError | undefined {
  if (!METHODS_WITH_BODY.has(req.method)) return undefined;
  if (req.body === undefined) {
    if (hasBody(req) && !isJsonContentType(req)) {
      return new ApiError(
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        'unsupported_media_type',
        'Request bodies must be JSON: send "Content-Type: application/json".',
      );
    }
    req.body = {};
    return undefined;
  }
  if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
    return new ApiError(HttpStatus.BAD_REQUEST, 'invalid_json', 'The request body must be a JSON object.');
  }
  if (jsonDepthExceeds(req.body, MAX_JSON_DEPTH)) {
    return new ApiError(
      HttpStatus.BAD_REQUEST,
      'invalid_json',
      `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`,
    );
  }
  return undefined;
}

/** The envelope error of a failed parse; a thread that failed is an unexpected error (500). */
function toParseError(error: unknown, limitBytes: number): unknown {
  const type = (error as { type?: unknown }).type;
  switch (type) {
    case 'thread.failed':
      return (error as { error: unknown }).error;
    case 'entity.too.large':
      return new ApiError(
        HttpStatus.PAYLOAD_TOO_LARGE,
        'payload_too_large',
        `The request body is larger than ${limitBytes} bytes.`,
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedCharset();
    case 'request.aborted':
      return new ApiError(
        HttpStatus.BAD_REQUEST,
        'request_aborted',
        'The request body was not received completely.',
      );
    default:
      return new ApiError(HttpStatus.BAD_REQUEST, 'invalid_json', 'The request body is not valid JSON.');
  }
}

/**
 * Whether objects and arrays nest deeper than `maxDepth`. It recurses no deeper than `maxDepth`, so
 * hostile nesting cannot exhaust the stack, and allocates nothing on the way.
 */
export function jsonDepthExceeds(value: unknown, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (maxDepth < 1) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (jsonDepthExceeds(value[i], maxDepth - 1)) return true;
    return false;
  }
  for (const key in value) {
    if (jsonDepthExceeds((value as Record<string, unknown>)[key], maxDepth - 1)) return true;
  }
  return false;
}
