import { MigrationInterface, QueryRunner } from 'typeorm';

/** The application that owns the profiles made before applications existed, and every single-key service's. */
export const DEFAULT_APPLICATION_ID = '00000000-0000-4000-8000-000000000001';

/**
 * Applications own profiles (a user id is unique within its application), API keys belong to an
 * application and carry scopes, and the audit trail records who changed, exported or erased what.
 * Existing profiles move to the `default` application; `profiles.application_id` defaults to it, so a
 * statement that names no application keeps meaning the single application of a one-key service.
 * Audit rows hold ids, never content, and reference nothing: they outlive the profile they name.
 */
export class ApplicationsKeysAudit1766000000000 implements MigrationInterface {
  name = 'ApplicationsKeysAudit1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE applications (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL UNIQUE,
        settings jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`INSERT INTO applications (id, name) VALUES ($1, 'default')`, [
      DEFAULT_APPLICATION_ID,
    ]);

    await queryRunner.query(
      `ALTER TABLE profiles ADD COLUMN application_id uuid NOT NULL DEFAULT '${DEFAULT_APPLICATION_ID}'
       REFERENCES applications (id)`,
    );
    await queryRunner.query(`ALTER TABLE profiles DROP CONSTRAINT profiles_external_id_key`);
    await queryRunner.query(
      `ALTER TABLE profiles ADD CONSTRAINT profiles_application_external_id_key UNIQUE (application_id, external_id)`,
    );
    await queryRunner.query(
      `CREATE INDEX profiles_application_created_at_idx ON profiles (application_id, created_at DESC, id DESC)`,
    );

    await queryRunner.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        application_id uuid NOT NULL REFERENCES applications (id),
        name text NOT NULL,
        prefix text NOT NULL UNIQUE,
        secret_hash bytea NOT NULL,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX api_keys_application_idx ON api_keys (application_id, created_at DESC)`,
    );

    await queryRunner.query(`
      CREATE TABLE audit_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT clock_timestamp(),
        key_id uuid,
        application_id uuid,
        action text NOT NULL,
        profile_id uuid,
        target jsonb NOT NULL DEFAULT '{}',
        request_id text,
        outcome text NOT NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX audit_events_application_idx ON audit_events (application_id, id DESC)`,
    );
    await queryRunner.query(`CREATE INDEX audit_events_profile_idx ON audit_events (profile_id, id DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE audit_events`);
    await queryRunner.query(`DROP TABLE api_keys`);
    await queryRunner.query(`DROP INDEX profiles_application_created_at_idx`);
    await queryRunner.query(`ALTER TABLE profiles DROP CONSTRAINT profiles_application_external_id_key`);
    await queryRunner.query(
      `ALTER TABLE profiles ADD CONSTRAINT profiles_external_id_key UNIQUE (external_id)`,
    );
    await queryRunner.query(`ALTER TABLE profiles DROP COLUMN application_id`);
    await queryRunner.query(`DROP TABLE applications`);
  }
}
