import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type request from 'supertest';
import { llmAnswer } from './fake-llm';
import type { FakeOpenAI, RecordedRequest } from './fake-openai-upstream';
import type { TestApp } from './test-app';

// The clients of the app's proxy (the official SDKs and plain HTTP), and reads of what a fake upstream
// received from the app.

type Headers = Record<string, string>;

/** The official OpenAI client on the app's `/v1` as `userId` (none when null), with the service key, no retries. */
export function openaiClient(
  t: TestApp,
  userId: string | null,
  headers: Headers = {},
  options: { timeout?: number } = {},
): OpenAI {
  return new OpenAI({
    apiKey: t.serviceKey ?? 'no-service-key',
    baseURL: `${t.url}/v1`,
    maxRetries: 0,
    ...options,
    defaultHeaders: userId === null ? headers : { 'X-Service-Id': userId, ...headers },
  });
}

/** The official Anthropic client on the app as `userId` (none when null), with the service key, no retries. */
export function anthropicClient(t: TestApp, userId: string | null, headers: Headers = {}): Anthropic {
  return new Anthropic({
    apiKey: t.serviceKey ?? 'no-service-key',
    baseURL: t.url,
    maxRetries: 0,
    defaultHeaders: userId === null ? headers : { 'X-Service-Id': userId, ...headers },
  });
}

/** `POST /v1/chat/completions` as `userId`, with the service key when the app has one: one user message. */
export function chatRequest(t: TestApp, userId: string, content: string, extra: object = {}): request.Test {
  return t
    .admin()
    .post('/v1/chat/completions')
    .set('X-Service-Id', userId)
    .send({ model: 'fake-model', messages: [{ role: 'user', content }], ...extra });
}

/** The bodies of the requests a fake received on `path` (e.g. `/v1/chat/completions`), in order. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function bodiesSentTo(fake: { requests: RecordedRequest[] }, path: string): any[] {
  return fake.requests.filter((r) => r.path === path).map((r) => r.body);
}

/** The system message of the last chat completion the upstream received: the injected context. */
export function injectedSystem(fake: { requests: RecordedRequest[] }): string {
  return bodiesSentTo(fake, '/v1/chat/completions').at(-1).messages[0].content as string;
}

/** The turns the service stored for a user, as (role, content) pairs, once its background work is done. */
export async function storedTurns(t: TestApp, userId: string): Promise<Array<[string, string]>> {
  await t.drain();
  const res = await t.admin().get(`/api/profiles/${encodeURIComponent(userId)}/export`);
  if (res.status === 404) return [];
  return (res.body.messages as Array<{ role: string; content: string }>).map((m) => [m.role, m.content]);
}

/**
 * One chat turn of `userId` that the upstream answers with `reply`, and the learning that follows it
 * (the app's background work) finished.
 */
export async function chatTurn(
  t: TestApp & { upstream: FakeOpenAI },
  userId: string,
  content: string,
  reply = 'Noted.',
): Promise<void> {
  t.upstream.script(llmAnswer(reply));
  await chatRequest(t, userId, content).expect(200);
  await t.drain();
}

/** Asks `question` as `userId` (not learnt from) and returns the system message the upstream received. */
export async function injectedFor(t: TestApp & { upstream: FakeOpenAI }, userId: string, question: string) {
  await chatRequest(t, userId, question, { model: 'm', service: { skipExtraction: true } }).expect(200);
  await t.drain();
  return injectedSystem(t.upstream);
}
