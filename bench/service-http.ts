/** A JSON request to the service under test; a status of 300 or more fails the benchmark. */
export async function callService(
  baseUrl: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res;
}

/** The memories a chat request injected, in rank order, from its `x-service-context-ids` header. */
export function injectedMemoryIds(res: Response): string[] {
  const memories = /memories=([^;]*)/.exec(res.headers.get('x-service-context-ids') ?? '')?.[1] ?? '';
  return memories.split(',').filter((id) => id.length > 0);
}

/** The mean, to three decimals (0 for none). */
export function mean(values: number[]): number {
  return values.length === 0
    ? 0
    : Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1000) / 1000;
}
