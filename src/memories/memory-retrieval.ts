import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MemoryType } from './memory.entity';
import { DEFAULT_RANKING_WEIGHTS, RankCandidate, rankMemories, RankingWeights } from './memory-ranking';

export interface RetrievedMemory extends RankCandidate {
  content: string;
  type: MemoryType;
}

/** Candidates from each source; the ranking then picks among them. */
const CANDIDATES_PER_SOURCE = 50;

interface CandidateRow {
  id: string;
  content: string;
  type: MemoryType;
  importance: number;
  decay_factor: number;
  created_at: Date;
  last_accessed_at: Date | null;
  text_rank: number;
}

/**
 * Finds the memories of a profile that best fit a question: candidates that share words with it
 * (PostgreSQL full text, 'english' stemming, any word may match) together with the most important and
 * most recent ones, ordered by `rankMemories`.
 */
@Injectable()
export class MemoryRetrieval {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async relevant(
    profileId: string,
    question: string,
    limit: number,
    now = new Date(),
    weights: RankingWeights = DEFAULT_RANKING_WEIGHTS,
  ): Promise<RetrievedMemory[]> {
    const rows: CandidateRow[] = await this.dataSource.query(
      `WITH question AS (
         SELECT (SELECT string_agg(quote_literal(lexeme), ' | ')
                 FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, $2))) AS lexeme)::tsquery AS query
       ),
       matching AS (
         SELECT m.id, ts_rank_cd(m.search_vector, q.query) AS text_rank
         FROM memories m, question q
         WHERE m.profile_id = $1 AND q.query IS NOT NULL AND m.search_vector @@ q.query
         ORDER BY text_rank DESC
         LIMIT $3
       ),
       important AS (
         SELECT m.id FROM memories m WHERE m.profile_id = $1
         ORDER BY m.importance * m.decay_factor DESC, m.created_at DESC LIMIT $3
       ),
       recent AS (
         SELECT m.id FROM memories m WHERE m.profile_id = $1 ORDER BY m.created_at DESC LIMIT $3
       ),
       candidates AS (
         SELECT id, max(text_rank) AS text_rank FROM (
           SELECT id, text_rank FROM matching
           UNION ALL SELECT id, 0 FROM important
           UNION ALL SELECT id, 0 FROM recent
         ) c GROUP BY id
       )
       SELECT m.id, m.content, m.type, m.importance, m.decay_factor, m.created_at, m.last_accessed_at,
              c.text_rank
       FROM candidates c JOIN memories m ON m.id = c.id AND m.profile_id = $1`,
      [profileId, question.slice(0, 4000), CANDIDATES_PER_SOURCE],
    );
    const candidates: RetrievedMemory[] = rows.map((row) => ({
      id: row.id,
      content: row.content,
      type: row.type,
      importance: row.importance,
      decayFactor: row.decay_factor,
      createdAt: row.created_at,
      lastAccessedAt: row.last_accessed_at,
      textRank: Number(row.text_rank),
    }));
    return rankMemories(candidates, now, weights).slice(0, limit);
  }

  /** Marks memories as used in a prompt: their decay stops counting from now. */
  async touch(profileId: string, ids: string[], now = new Date()): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource.query(
      `UPDATE memories SET last_accessed_at = $3 WHERE profile_id = $1 AND id = ANY($2::uuid[])`,
      [profileId, ids, now],
    );
  }
}
