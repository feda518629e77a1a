import { Logger } from '@nestjs/common';
import { TraitSchema } from '../traits/trait-schema';
import { ExtractionFailedError, ExtractionFailureCause } from './extraction-errors';
import { ExtractionResult, KnownMemory } from './extraction-types';
import { LlmChat, LlmChatRequest } from './llm-chat';
import {
  buildExtractionMessages,
  buildExtractionResponseFormat,
  JSON_OBJECT_RESPONSE_FORMAT,
} from './llm-extraction-prompt';
import { parseExtractionOutput } from './llm-output-parser';
import { backoffDelayMs, sleep } from './retry-backoff';

/** How the answer's shape is asked for, strongest first; the plain prompt describes the JSON too. */
const RESPONSE_FORMATS = ['json_schema', 'json_object', 'prompt_only'] as const;
type ResponseFormatKind = (typeof RESPONSE_FORMATS)[number];

export interface LlmRetryPolicy {
  /** Tries of one extraction when it fails transiently. */
  attempts: number;
  retryBaseMs: number;
}

/**
 * Extraction with an LLM: one chat call that asks for `{ traits, memories }`. When the provider rejects
 * the structured-output format the call is repeated with the next weaker one (a rejection that names the
 * format is remembered, so later calls start there). Transient failures and unusable answers are retried
 * with exponential backoff, `attempts` tries in all; then ExtractionFailedError.
 */
export class LlmExtractor {
  private readonly logger = new Logger('LlmExtractor');
  private firstFormat = 0;

  constructor(
    private readonly chat: LlmChat,
    private readonly retry: LlmRetryPolicy,
  ) {}

  /**
   * Extracts from `text`: one text, or messages the prompt numbers, which the answer's memories cite
   * (`ExtractedMemory.sources`, positions in `text`).
   */
  async extract(
    text: string | readonly string[],
    schemas: readonly TraitSchema[],
    signal: AbortSignal,
    known: readonly KnownMemory[] = [],
  ): Promise<ExtractionResult> {
    const texts = typeof text === 'string' ? [text] : text;
    const messages = buildExtractionMessages(texts, schemas, known);
    let format = this.firstFormat;
    let failures = 0;
    for (;;) {
      const outcome = await this.chat.complete(request(messages, RESPONSE_FORMATS[format], schemas), signal);
      let reason: string;
      let cause: ExtractionFailureCause;
      let retryAfterMs: number | undefined;
      switch (outcome.kind) {
        case 'answer': {
          if (outcome.content === null) {
            // A refusal is the model's considered answer; asking again would not change it.
            this.logger.warn(`the model answered without content (${outcome.refusal ?? 'no refusal text'})`);
            return { traits: [], memories: [] };
          }
          const parsed = parseExtractionOutput(outcome.content, schemas, texts.length);
          if (parsed.ok) {
            for (const item of parsed.dropped) {
              this.logger.warn(`dropped an extracted ${item.kind}: ${item.reason}`);
            }
            return parsed.result;
          }
          reason = `unusable answer: ${parsed.reason}`;
          cause = 'unusable_answer';
          break;
        }
        case 'rejected':
          if (format === RESPONSE_FORMATS.length - 1) {
            throw new ExtractionFailedError(
              `the LLM rejected the request (${outcome.detail})`,
              false,
              'rejected',
            );
          }
          format++;
          if (/response_format|json_schema|json_object/i.test(outcome.detail)) {
            this.firstFormat = Math.max(this.firstFormat, format);
          }
          this.logger.warn(
            `the LLM rejected the request; trying ${RESPONSE_FORMATS[format]} (${outcome.detail})`,
          );
          continue;
        case 'transient':
          reason = outcome.reason;
          cause = 'unavailable';
          retryAfterMs = outcome.retryAfterMs;
          break;
        case 'failed':
          throw new ExtractionFailedError(`the LLM call failed (${outcome.reason})`, false, 'call_failed');
      }
      failures++;
      if (failures >= this.retry.attempts) {
        throw new ExtractionFailedError(
          `the LLM call failed ${failures} time(s); last: ${reason}`,
          true,
          cause,
        );
      }
      this.logger.warn(`LLM extraction try ${failures} failed (${reason}); retrying`);
      await sleep(backoffDelayMs(failures, this.retry.retryBaseMs, retryAfterMs), signal);
    }
  }
}

function request(
  messages: LlmChatRequest['messages'],
  format: ResponseFormatKind,
  schemas: readonly TraitSchema[],
): LlmChatRequest {
  switch (format) {
    case 'json_schema':
      return { messages, response_format: buildExtractionResponseFormat(schemas) };
    case 'json_object':
      return { messages, response_format: JSON_OBJECT_RESPONSE_FORMAT };
    case 'prompt_only':
      return { messages };
  }
}
