import { MigrationInterface, QueryRunner } from 'typeorm';
import { EVERY_PROFILE, PROFILE_CHANGES_CHANNEL, TOUCH_ONLY_SETTING } from '../profile-changes-channel';

/** A statement that changes more profiles than this sends one notification for all (EVERY_PROFILE). */
const PROFILES_NAMED_PER_STATEMENT = 1000;

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
    await queryRunner.query(notifyFunction(true));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(notifyFunction(false));
  }
}

function notifyFunction(touchesUnannounced: boolean): string {
  const touchOnly = touchesUnannounced
    ? `IF current_setting('${TOUCH_ONLY_SETTING}', true) = 'on' THEN
         PERFORM set_config('${TOUCH_ONLY_SETTING}', 'off', true);
         RETURN NULL;
       END IF;`
    : '';
  return `CREATE OR REPLACE FUNCTION notify_profile_changes() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE
       ids text[];
     BEGIN
       ${touchOnly}
       EXECUTE format('SELECT array_agg(DISTINCT %I::text) FROM changed_rows', TG_ARGV[0]) INTO ids;
       IF cardinality(ids) > ${PROFILES_NAMED_PER_STATEMENT} THEN
         PERFORM pg_notify('${PROFILE_CHANGES_CHANNEL}', '${EVERY_PROFILE}');
       ELSE
         PERFORM pg_notify('${PROFILE_CHANGES_CHANNEL}', id) FROM unnest(ids) AS id;
       END IF;
       RETURN NULL;
     END $$`;
}
