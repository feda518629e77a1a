import { HttpStatus } from '@nestjs/common';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from './api-error';

/** Deeper JSON than this is refused before any code walks it recursively. */
export const MAX_JSON_DEPTH = 64;

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * JSON body parsing with our own errors: malformed JSON, bodies over the limit, other media types and
 * bodies that are not a JSON object all become envelope errors instead of the framework's defaults.
 */
export function jsonBodyParser(limitBytes: number): RequestHandler[] {
  const parseJson = express.json({ limit: limitBytes, strict: true, type: isJsonContentType });
  return [
    (req: Request, _res: Response, next: NextFunction) => next(checkCharset(req)),
    (req: Request, res: Response, next: NextFunction) => {
      parseJson(req, res, (error?: unknown) =>
        next(error === undefined ? undefined : toParseError(error, limitBytes)),
      );
    },
    (req: Request, _res: Response, next: NextFunction) => next(checkParsedBody(req)),
  ];
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

function toParseError(error: unknown, limitBytes: number): ApiError {
  const type = (error as { type?: unknown }).type;
  switch (type) {
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

/** Iterative, so that hostile nesting cannot exhaust the stack. */
export function jsonDepthExceeds(value: unknown, maxDepth: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}
