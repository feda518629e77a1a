import type { IncomingMessage, ServerResponse } from 'node:http';
import { assignRequestId } from './request-id';

function exchange(header?: string | string[]): {
  req: IncomingMessage;
  res: ServerResponse;
  sent: () => unknown;
} {
  const headers: Record<string, unknown> = {};
  const req = {
    headers: header === undefined ? {} : { 'x-request-id': header },
  } as unknown as IncomingMessage;
  const res = {
    setHeader: (name: string, value: unknown) => (headers[name] = value),
  } as unknown as ServerResponse;
  return { req, res, sent: () => headers['X-Request-Id'] };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('assignRequestId', () => {
  it.each(['abc-123', 'req_01HZX.9:a@b/c+d=e', 'x'.repeat(128)])(
    'keeps the caller id %s and echoes it',
    (id) => {
      const { req, res, sent } = exchange(id);
      expect(assignRequestId(req, res)).toBe(id);
      expect(sent()).toBe(id);
    },
  );

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['too long', 'x'.repeat(129)],
    ['with spaces', 'a b'],
    ['with quotes', 'a"b'],
    ['with a line break', 'a\nb'],
    ['with non-ASCII', 'café'],
  ])('makes a new UUID when the caller id is %s', (_label, id) => {
    const { req, res, sent } = exchange(id);
    const assigned = assignRequestId(req, res);
    expect(assigned).toMatch(UUID);
    expect(sent()).toBe(assigned);
  });

  it('takes the first of repeated headers', () => {
    const { req, res } = exchange(['first', 'second']);
    expect(assignRequestId(req, res)).toBe('first');
  });
});
