import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The per-request trait schemas of a chat turn (service.traits / X-Service-Traits) are stored with its
 * messages, so that extraction, also when it is resumed after a restart, learns the keys that turn asked for.
 */
export class MessageTraitOverrides1763800000000 implements MigrationInterface {
  name = 'MessageTraitOverrides1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages ADD COLUMN trait_overrides jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages DROP COLUMN trait_overrides`);
  }
}
