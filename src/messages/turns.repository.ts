import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** A chat turn as stored: the user's messages and the answer that share its request id. */
export interface StoredTurn {
  requestId: string;
  said: string[];
  answer: string;
  model: string;
  createdAt: Date;
  injected: { traits: string[]; memories: Array<{ id: string; content: string | null }> } | null;
}

export interface TurnPage {
  turns: StoredTurn[];
  next: string | null;
}

interface TurnRow {
  seq: string;
  request_id: string | null;
  created_at: Date;
  answer: string;
  model: string | null;
  injected_traits: string[] | null;
  injected_memories: Array<{ id: string; content: string | null }> | null;
  said: string[] | null;
  beyond: boolean;
}

/**
 * The stored conversation read back as turns, newest first. A turn is anchored on its answer (the
 * assistant message, written last in the turn's insert); its user messages are the ones of the same
 * request between the previous answer and this one, so each turn reads a bounded range of the
 * profile's (profile_id, seq) index, and a page costs the same on the first page and the thousandth.
 */
@Injectable()
export class TurnsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async page(profileId: string, limit: number, before: string | null): Promise<TurnPage> {
    const rows: TurnRow[] = await this.dataSource.query(
      `WITH answers AS (
         SELECT a.*, lead(a.seq) OVER (ORDER BY a.seq DESC) AS older_seq,
                row_number() OVER (ORDER BY a.seq DESC) AS position
         FROM (SELECT seq, request_id, created_at, content, model, injected
               FROM messages
               WHERE profile_id = $1 AND role = 'assistant' AND ($2::bigint IS NULL OR seq < $2::bigint)
               ORDER BY seq DESC
               LIMIT $3 + 1) a)
       SELECT a.seq::text AS seq, a.request_id, a.created_at, a.content AS answer, a.model,
              a.position > $3 AS beyond,
              CASE WHEN a.position <= $3 THEN
                (SELECT json_agg(u.content ORDER BY u.seq) FROM messages u
                 WHERE u.profile_id = $1 AND u.role = 'user' AND u.seq < a.seq
                   AND u.seq > coalesce(a.older_seq, 0) AND u.request_id IS NOT DISTINCT FROM a.request_id)
              END AS said,
              a.injected -> 'traits' AS injected_traits,
              CASE WHEN a.position <= $3 AND a.injected IS NOT NULL THEN
                (SELECT coalesce(json_agg(json_build_object('id', i.id, 'content', m.content) ORDER BY i.n),
                                 '[]'::json)
                 FROM jsonb_array_elements_text(a.injected -> 'memories') WITH ORDINALITY AS i(id, n)
                 LEFT JOIN memories m ON m.id = i.id::uuid AND m.profile_id = $1)
              END AS injected_memories
       FROM answers a
       ORDER BY a.seq DESC`,
      [profileId, before, limit],
    );
    const turns = rows.filter((row) => !row.beyond).map(toStoredTurn);
    const more = rows.some((row) => row.beyond);
    return { turns, next: more && turns.length > 0 ? rows[turns.length - 1].seq : null };
  }
}

function toStoredTurn(row: TurnRow): StoredTurn {
  return {
    requestId: row.request_id ?? '',
    said: row.said ?? [],
    answer: row.answer,
    model: row.model ?? '',
    createdAt: row.created_at,
    injected:
      row.injected_traits === null
        ? null
        : { traits: row.injected_traits, memories: row.injected_memories ?? [] },
  };
}
