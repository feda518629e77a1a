/**
 * The value of a request body's JSON text as the service reads it: a byte order mark is dropped,
 * nothing is `{}`, and only an object or an array may stand at the top. It uses nothing outside
 * itself, because the JSON parsing thread runs its source.
 */
export function parseJsonBodyText(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.length === 0) return {};
  const first = /^[ \t\n\r]*(.|$)/s.exec(body)![1];
  if (first !== '{' && first !== '[') throw new SyntaxError('not an object or array');
  return JSON.parse(body);
}
