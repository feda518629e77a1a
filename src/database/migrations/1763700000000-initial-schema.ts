import { MigrationInterface, QueryRunner } from 'typeorm';

/** Profiles, traits, memories and messages. Plain PostgreSQL 15 SQL: it runs on the server and on PGlite. */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE profiles (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        external_id text UNIQUE,
        summary text NOT NULL DEFAULT '',
        summary_version integer NOT NULL DEFAULT 0,
        summary_updated_at timestamptz,
        summary_is_manual boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX profiles_created_at_idx ON profiles (created_at DESC, id DESC)`);

    await queryRunner.query(`
      CREATE TABLE traits (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        profile_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
        key text NOT NULL,
        value jsonb NOT NULL,
        value_type text NOT NULL,
        category text NOT NULL,
        confidence real NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        source text NOT NULL CHECK (source IN ('extracted', 'manual')),
        source_message_ids uuid[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT traits_profile_key_unique UNIQUE (profile_id, key)
      )`);

    await queryRunner.query(`
      CREATE TABLE memories (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        profile_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
        content text NOT NULL,
        content_hash text NOT NULL,
        type text NOT NULL CHECK (type IN ('fact', 'preference', 'event', 'context')),
        importance real NOT NULL CHECK (importance >= 0 AND importance <= 1),
        decay_factor real NOT NULL DEFAULT 1 CHECK (decay_factor > 0 AND decay_factor <= 1),
        search_vector tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED,
        source_message_ids uuid[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        last_accessed_at timestamptz,
        CONSTRAINT memories_profile_content_unique UNIQUE (profile_id, content_hash)
      )`);
    await queryRunner.query(
      `CREATE INDEX memories_profile_created_idx ON memories (profile_id, created_at DESC)`,
    );
    await queryRunner.query(`CREATE INDEX memories_search_idx ON memories USING gin (search_vector)`);

    await queryRunner.query(`
      CREATE TABLE messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        profile_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
        role text NOT NULL,
        content text NOT NULL,
        request_id text,
        model text,
        created_at timestamptz NOT NULL DEFAULT now(),
        extracted_at timestamptz,
        extraction_attempts integer NOT NULL DEFAULT 0,
        extraction_error text
      )`);
    await queryRunner.query(`CREATE INDEX messages_profile_seq_idx ON messages (profile_id, seq)`);
    await queryRunner.query(`CREATE INDEX messages_pending_idx ON messages (seq) WHERE extracted_at IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE messages`);
    await queryRunner.query(`DROP TABLE memories`);
    await queryRunner.query(`DROP TABLE traits`);
    await queryRunner.query(`DROP TABLE profiles`);
  }
}
