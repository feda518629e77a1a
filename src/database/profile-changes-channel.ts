/** The notification channel on which the database sends the id of every profile whose rows changed. */
export const PROFILE_CHANGES_CHANNEL = 'profile_changes';
/** The payload that stands for every profile (a statement that changed too many to name them). */
export const EVERY_PROFILE = '*';
/**
 * Set (transaction-local, to 'on') by a statement that only marks memories used (MemoryTouches): the
 * notification trigger then sends nothing for that statement, and turns the setting off again.
 */
export const TOUCH_ONLY_SETTING = 'pms.touch_only';
