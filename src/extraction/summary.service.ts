import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { errorMessage } from '../common/error-message';
import { JobLeases } from '../database/job-leases';
import { ProfileHistory } from '../history/profile-history';
import { TraitSchemaRegistry } from '../traits/trait-schema-registry';
import { TraitsRepository } from '../traits/traits.repository';
import { ExtractionAbortedError } from './extraction-errors';
import { ExtractionService } from './extraction.service';
import { LlmChat } from './llm-chat';
import {
  cleanSummary,
  SUMMARY_MEMORIES,
  SummaryMemory,
  summaryPromptMessages,
  SummaryTrait,
  templateSummary,
} from './summary-text';

/**
 * Regenerates a profile's summary after extraction changed it, at most once per SUMMARY_INTERVAL_MINUTES,
 * and never while a summary written by hand is in place. With the LLM extractor the LLM writes it (one
 * call; a failure keeps the old summary until the next change), else a template does.
 *
 * An automatic summary never outlives what it states: in the transaction of every change that removes
 * or replaces a memory or trait (whatever made it: the API, MCP, extraction, a revert, a supersession),
 * the template's summary is written again from what remains, and an LLM's is emptied and made due.
 */
@Injectable()
export class SummaryService {
  private readonly logger = new Logger('SummaryService');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly extraction: ExtractionService,
    private readonly llm: LlmChat,
    private readonly schemas: TraitSchemaRegistry,
    private readonly leases: JobLeases,
    private readonly traits: TraitsRepository,
    history: ProfileHistory,
  ) {
    history.onContentReplaced((manager, profileId) => this.followReplacedContent(manager, profileId));
  }

  /**
   * Within the transaction of a change that removed or replaced content: an automatic summary that
   * has text is written again from what remains (template) or emptied and made due (LLM). The time it
   * was last written stays, so the next scheduled refresh comes when it would have.
   */
  private async followReplacedContent(manager: EntityManager, profileId: string): Promise<void> {
    // the row lock makes two concurrent changes compose in turn, the second seeing the first's rows
    const rows: Array<{ summary: string }> = await manager.query(
      `SELECT summary FROM profiles WHERE id = $1 AND NOT summary_is_manual AND summary <> ''
       FOR NO KEY UPDATE`,
      [profileId],
    );
    if (rows.length === 0) return;
    if (this.extraction.mode !== 'heuristic') {
      await manager.query(
        `UPDATE profiles SET summary = '', summary_version = summary_version + 1, summary_updated_at = NULL,
           updated_at = now()
         WHERE id = $1`,
        [profileId],
      );
      return;
    }
    const summary = (await this.templateOf(profileId, manager)) ?? '';
    if (summary === rows[0].summary) return;
    await manager.query(
      `UPDATE profiles SET summary = $2, summary_version = summary_version + 1, updated_at = now() WHERE id = $1`,
      [profileId, summary],
    );
  }

  /**
   * Returns true when a new summary was stored. Never throws. One process at a time writes a profile's
   * summary (a job lease): another that finds it taken leaves it, so no LLM call is made twice. The
   * lease is taken only when a summary is due, which after most changes it is not.
   */
  async refreshIfDue(profileId: string, signal?: AbortSignal): Promise<boolean> {
    let stored = false;
    try {
      if ((await this.due(profileId)) === null) return false;
      await this.leases.runExclusive(`summary:${profileId}`, SUMMARY_LEASE_MS, async () => {
        stored = await this.refreshNow(profileId, signal);
      });
    } catch (error) {
      this.logger.warn(`summary of profile ${profileId} not refreshed: ${errorMessage(error)}`);
    }
    return stored;
  }

  /** The profile's current summary when a new one is due, else null. */
  private async due(profileId: string): Promise<{ summary: string } | null> {
    const rows: Array<{ summary: string }> = await this.dataSource.query(
      `SELECT summary FROM profiles WHERE id = $1 AND ${DUE_CONDITION}`,
      [profileId, this.config.summaryIntervalMinutes],
    );
    return rows[0] ?? null;
  }

  private async refreshNow(profileId: string, signal?: AbortSignal): Promise<boolean> {
    try {
      // again under the lease: another process may have written it meanwhile
      const due = await this.due(profileId);
      if (due === null) return false;
      const summary = await this.compose(profileId, signal ?? new AbortController().signal);
      if (summary === null || summary === due.summary) return false;
      // The condition again: a PATCH or another worker may have come in meanwhile.
      const [, updated]: [unknown[], number] = await this.dataSource.query(
        `UPDATE profiles
         SET summary = $3, summary_version = summary_version + 1, summary_updated_at = now(), updated_at = now()
         WHERE id = $1 AND ${DUE_CONDITION}`,
        [profileId, this.config.summaryIntervalMinutes, summary],
      );
      return updated > 0;
    } catch (error) {
      if (!(error instanceof ExtractionAbortedError)) {
        this.logger.warn(`summary of profile ${profileId} not refreshed: ${(error as Error).message}`);
      }
      return false;
    }
  }

  /** The template's summary of what the profile holds now; null when it holds nothing. */
  private async templateOf(profileId: string, manager: EntityManager): Promise<string | null> {
    const { traits, memories } = await this.summarised(profileId, manager);
    if (traits.length === 0 && memories.length === 0) return null;
    return templateSummary(traits, memories, this.schemas.all());
  }

  /** The traits and the most important current memories, which a summary draws on. */
  private async summarised(
    profileId: string,
    manager: EntityManager,
  ): Promise<{ traits: SummaryTrait[]; memories: SummaryMemory[] }> {
    const traits: SummaryTrait[] = await this.traits.keyValues(profileId, manager);
    const memories: SummaryMemory[] = await manager.query(
      `SELECT content FROM memories WHERE profile_id = $1 AND superseded_at IS NULL
       ORDER BY importance * decay_factor DESC, created_at DESC LIMIT $2`,
      [profileId, SUMMARY_MEMORIES],
    );
    return { traits, memories };
  }

  private async compose(profileId: string, signal: AbortSignal): Promise<string | null> {
    if (this.extraction.mode === 'heuristic') return this.templateOf(profileId, this.dataSource.manager);
    const { traits, memories } = await this.summarised(profileId, this.dataSource.manager);
    if (traits.length === 0 && memories.length === 0) return null;

    const outcome = await this.llm.complete({ messages: summaryPromptMessages(traits, memories) }, signal);
    if (outcome.kind !== 'answer' || outcome.content === null) {
      this.logger.warn(`the LLM wrote no summary for profile ${profileId} (${describeOutcome(outcome)})`);
      return null;
    }
    const summary = cleanSummary(outcome.content);
    return summary === '' ? null : summary;
  }
}

/** Long enough for every try of the summary's LLM call. */
const SUMMARY_LEASE_MS = 5 * 60_000;

/**
 * An automatic summary is due once SUMMARY_INTERVAL_MINUTES have passed, and at once when a memory it
 * may repeat was superseded since it was written: it must not keep stating a replaced fact.
 */
const DUE_CONDITION = `NOT summary_is_manual
  AND (summary_updated_at IS NULL OR summary_updated_at <= now() - make_interval(mins => $2::int)
       OR EXISTS (SELECT 1 FROM memories m
                  WHERE m.profile_id = profiles.id AND m.superseded_at >= profiles.summary_updated_at))`;

function describeOutcome(outcome: Awaited<ReturnType<LlmChat['complete']>>): string {
  switch (outcome.kind) {
    case 'answer':
      return outcome.refusal ?? 'empty answer';
    case 'rejected':
      return outcome.detail;
    default:
      return outcome.reason;
  }
}
