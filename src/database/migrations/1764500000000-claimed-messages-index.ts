import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The messages under an extraction claim, by profile: a claim first checks that no batch of the
 * profile is claimed, which through the pending-messages index read every pending message of the
 * profile, so a backlog made each claim slower. Claimed rows are few (a claim is cleared when its
 * batch is done, failed or released), so this index stays small.
 */
export class ClaimedMessagesIndex1764500000000 implements MigrationInterface {
  name = 'ClaimedMessagesIndex1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX messages_claimed_idx ON messages (profile_id)
       WHERE extracted_at IS NULL AND claimed_until IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX messages_claimed_idx`);
  }
}
