import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Memories that revise themselves, and the record of every change:
 * - memories: `superseded_by` / `superseded_at` (a newer memory replaced this one: it is kept, never
 *   injected), `confirmed_at` (said again: reinforced), `fact_key` (the kind of single-valued fact it
 *   states, such as `location`, so that a newer one of the same kind supersedes it);
 * - profile_history: each change of a memory or a trait, with the old and new value, its source and the
 *   messages it came from; kept after the memory or trait is deleted, removed with the profile.
 */
export class MemoryRevision1764400000000 implements MigrationInterface {
  name = 'MemoryRevision1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE memories
      ADD COLUMN superseded_by uuid REFERENCES memories (id) ON DELETE SET NULL,
      ADD COLUMN superseded_at timestamptz,
      ADD COLUMN confirmed_at timestamptz,
      ADD COLUMN fact_key text`);
    await queryRunner.query(`CREATE INDEX memories_current_fact_idx ON memories (profile_id, fact_key)
      WHERE fact_key IS NOT NULL AND superseded_at IS NULL`);
    await queryRunner.query(`CREATE TABLE profile_history (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      profile_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
      subject text NOT NULL CHECK (subject IN ('memory', 'trait')),
      subject_key text NOT NULL,
      change text NOT NULL
        CHECK (change IN ('created', 'updated', 'superseded', 'reinforced', 'deleted', 'reverted')),
      old_value jsonb,
      new_value jsonb,
      source text NOT NULL CHECK (source IN ('api', 'extraction', 'ingest')),
      source_message_ids uuid[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(
      `CREATE INDEX profile_history_subject_idx ON profile_history (profile_id, subject, subject_key, seq DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE profile_history`);
    await queryRunner.query(`DROP INDEX memories_current_fact_idx`);
    await queryRunner.query(`ALTER TABLE memories
      DROP COLUMN fact_key, DROP COLUMN confirmed_at, DROP COLUMN superseded_at, DROP COLUMN superseded_by`);
  }
}
