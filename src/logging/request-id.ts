import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';

/** What a caller may send as its own request id: short, and nothing that could forge a log line. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The id of one request: the caller's `X-Request-Id` when it is a sane token, else a new UUID. It is
 * echoed in the response header, so a caller can quote it and an operator can find every log line.
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const header = req.headers[REQUEST_ID_HEADER];
  const incoming = Array.isArray(header) ? header[0] : header;
  const id = incoming !== undefined && ACCEPTED_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}
