/**
 * Paths that pino censors wherever code logs an object shaped like a request, its headers or a body.
 * The request serializer below never logs headers or bodies in the first place; this is the second
 * line of defence for anything logged by hand.
 */
const SECRET_HEADERS = [
  'authorization',
  'cookie',
  'set-cookie',
  'x-upstream-key',
  'x-api-key',
  'proxy-authorization',
];
const SECRET_FIELDS = ['apiKey', 'api_key', 'password', 'token', 'secret'];
const TEXT_FIELDS = ['messages', 'prompt', 'content', 'text', 'completion'];

export const REDACTED_PATHS: string[] = [
  ...SECRET_HEADERS.flatMap((name) => [`headers["${name}"]`, `*.headers["${name}"]`]),
  ...SECRET_FIELDS.flatMap((name) => [name, `*.${name}`]),
  ...TEXT_FIELDS.flatMap((name) => [`body.${name}`, `*.body.${name}`]),
];

export const REDACTED = '[redacted]';
