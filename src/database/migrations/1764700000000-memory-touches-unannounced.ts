import { MigrationInterface, QueryRunner } from 'typeorm';
import { TOUCH_ONLY_SETTING } from '../profile-changes-channel';
import { notifyProfileChangesSql } from './1764600000000-profile-change-notifications';

/**
 * The profile change trigger (migration 1764600000000) sends nothing for a statement that only marks
 * memories used (MemoryTouches sets TOUCH_ONLY_SETTING in its transaction; the trigger turns it off, so
 * it holds for that one statement). A touch changes "last accessed", which ranking reads as recency
 * counted in days, and touches are a minute coarse already; announcing each made every replica read
 * the profile's touched rows again on its next chat, most often right after the chat that injected
 * them. A held copy now takes the new times when it is next confirmed (CONTEXT_HELD_TRUST_MS) or the
 * profile changes otherwise.
 */
export class MemoryTouchesUnannounced1764700000000 implements MigrationInterface {
  name = 'MemoryTouchesUnannounced1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      notifyProfileChangesSql(
        `IF current_setting('${TOUCH_ONLY_SETTING}', true) = 'on' THEN
           PERFORM set_config('${TOUCH_ONLY_SETTING}', 'off', true);
           RETURN NULL;
         END IF;`,
      ),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(notifyProfileChangesSql());
  }
}
