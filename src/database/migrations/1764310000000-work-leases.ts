import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Background work is coordinated by leases in rows instead of session locks, so that no connection is
 * held while an LLM or embeddings call is answered and a killed process's work is taken over when its
 * lease runs out:
 * - messages: the lease of a batch being extracted (`claimed_until`, `claim_token`), and when a batch
 *   that failed may be tried again (`next_attempt_at`);
 * - job_leases: which process runs a job that one replica must run at a time (decay, sweeps, ...);
 * - memory_embeddings: a row without a vector is claimed (`claimed_until`) by the process embedding
 *   it, so two replicas never embed one memory twice; memories by creation, for the embedding sweep to
 *   go through them once instead of scanning the table for every batch.
 */
export class WorkLeases1764310000000 implements MigrationInterface {
  name = 'WorkLeases1764310000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages
      ADD COLUMN claimed_until timestamptz,
      ADD COLUMN claim_token uuid,
      ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now()`);
    await queryRunner.query(`DROP INDEX messages_pending_idx`);
    await queryRunner.query(
      `CREATE INDEX messages_pending_idx ON messages (profile_id, seq) WHERE extracted_at IS NULL`,
    );
    await queryRunner.query(`ALTER TABLE memory_embeddings ADD COLUMN claimed_until timestamptz`);
    await queryRunner.query(`CREATE INDEX memories_created_idx ON memories (created_at, id)`);
    await queryRunner.query(`CREATE TABLE job_leases (
      name text PRIMARY KEY,
      holder uuid NOT NULL,
      expires_at timestamptz NOT NULL
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE job_leases`);
    await queryRunner.query(`DROP INDEX memories_created_idx`);
    await queryRunner.query(`ALTER TABLE memory_embeddings DROP COLUMN claimed_until`);
    await queryRunner.query(`DROP INDEX messages_pending_idx`);
    await queryRunner.query(`CREATE INDEX messages_pending_idx ON messages (seq) WHERE extracted_at IS NULL`);
    await queryRunner.query(`ALTER TABLE messages
      DROP COLUMN claimed_until, DROP COLUMN claim_token, DROP COLUMN next_attempt_at`);
  }
}
