import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Embeddings of memories for optional semantic ranking (EMBEDDINGS_MODEL). Vectors are stored as
 * `real[]`, which every PostgreSQL has, and compared through pgvector's `vector` type at query time, so
 * the schema is the same with or without pgvector and the extension can be installed later.
 *
 * pgvector is created here when the server offers it (PGlite always does; the service loads it). Where
 * it is missing, or the migrating role may not create it, the migration goes on and the service ranks by
 * full text alone.
 */
export class MemoryEmbeddings1764100000000 implements MigrationInterface {
  name = 'MemoryEmbeddings1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE memory_embeddings (
        memory_id uuid PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
        profile_id uuid NOT NULL,
        model text NOT NULL,
        embedding real[],
        error text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX memory_embeddings_profile_model_idx ON memory_embeddings (profile_id, model)`,
    );
    await queryRunner.query(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
          BEGIN
            CREATE EXTENSION IF NOT EXISTS vector;
          EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'pgvector is available but this role may not create it: semantic ranking stays off';
          END;
        END IF;
      END
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE memory_embeddings`);
  }
}
