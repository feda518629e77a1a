import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './api-schema';

export type Schemas = components['schemas'];

const KEY_STORAGE = 'pms-console-key';

/** The API key, kept for this browser tab only (sessionStorage): it goes when the tab closes. */
export const storedKey = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};

/** An API failure, in words for the person at the console. */
export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

const STATUS_WORDS: Record<number, string> = {
  400: 'The service did not accept this input.',
  401: 'The service refused this API key.',
  403: 'This API key may not do that.',
  404: 'Not found: it may have been deleted.',
  409: 'This conflicts with what is stored already.',
  413: 'This is too large for the service.',
  429: 'Too many requests: wait a moment and try again.',
};

/** The words of an error answer: the envelope's message when there is one, never the raw JSON. */
export function failureOf(status: number, body: unknown): ApiFailure {
  const error = (body as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  const code = typeof error?.code === 'string' ? error.code : null;
  if (typeof error?.message === 'string' && error.message.trim() !== '') {
    const message = error.message.trim();
    return new ApiFailure(/[.!?]$/.test(message) ? message : `${message}.`, status, code);
  }
  const words =
    STATUS_WORDS[status] ??
    (status >= 500 ? 'The service failed to answer; try again.' : `Request failed (${status}).`);
  return new ApiFailure(words, status, code);
}

/** Sends the tab's key with every call; turns a failed call into an ApiFailure. */
function authorised(key: () => string | null): Middleware {
  return {
    onRequest({ request }) {
      const value = key();
      if (value) request.headers.set('Authorization', `Bearer ${value}`);
      return request;
    },
  };
}

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(authorised(storedKey.get));

/**
 * The data of an openapi-fetch answer, or throws its failure in words. A network failure (the service
 * is down) throws too, in words.
 */
export async function call<T>(
  request: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let answer: { data?: T; error?: unknown; response: Response };
  try {
    answer = await request;
  } catch {
    throw new ApiFailure('The service did not answer: is it running?', 0, null);
  }
  if (!answer.response.ok || answer.data === undefined) throw failureOf(answer.response.status, answer.error);
  return answer.data;
}

/** A plain fetch of the API with the tab's key, for routes the service's OpenAPI document does not have yet. */
export async function callRoute<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    const key = storedKey.get();
    response = await fetch(path, {
      method,
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiFailure('The service did not answer: is it running?', 0, null);
  }
  const parsed: unknown = await response.json().catch(() => null);
  if (!response.ok) throw failureOf(response.status, parsed);
  return parsed as T;
}

export function errorText(error: unknown): string {
  return error instanceof ApiFailure ? error.message : 'Something went wrong in the console.';
}
