import type { DataSource, EntityManager } from 'typeorm';

/**
 * The first statement of a transaction that changes a profile's rows (traits, memories, history):
 * takes the profile row's KEY SHARE lock and says whether the profile still exists.
 *
 * Erasure locks the profile row (FOR UPDATE) before it deletes the profile's rows, so a writer that
 * takes this lock first is ordered wholly before or wholly after an erasure. Without it a write that
 * changed a trait and then recorded its history (whose foreign key takes this same lock, but late)
 * deadlocked with an erasure waiting for that trait, and one of them failed with 503. KEY SHARE does
 * not hold back other writers of the profile, nor updates of the profile row's own columns.
 */
async function lockProfileForWrite(manager: EntityManager, profileId: string): Promise<boolean> {
  const rows: unknown[] = await manager.query(`SELECT 1 FROM profiles WHERE id = $1 FOR KEY SHARE`, [
    profileId,
  ]);
  return rows.length > 0;
}

/**
 * Runs `work` in a transaction whose first statement takes the profile's write lock
 * (lockProfileForWrite); throws what `gone` makes when the profile no longer exists.
 */
export function inProfileWrite<T>(
  dataSource: DataSource,
  profileId: string,
  gone: () => Error,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  return dataSource.transaction(async (manager) => {
    if (!(await lockProfileForWrite(manager, profileId))) throw gone();
    return work(manager);
  });
}
