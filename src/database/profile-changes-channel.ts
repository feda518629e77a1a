/** The notification channel on which the database sends the id of every profile whose rows changed. */
export const PROFILE_CHANGES_CHANNEL = 'profile_changes';
/** The payload that stands for every profile (a statement that changed too many to name them). */
export const EVERY_PROFILE = '*';
/**
 * Set (transaction-local, to 'on') by a statement that only marks memories used (MemoryTouches): the
 * notification trigger then sends nothing for that statement, and turns the setting off again.
 */
export const TOUCH_ONLY_SETTING = 'pms.touch_only';
/**
 * The channel of the change feed's probes: each replica's feed sends one on it every
 * CHANGE_PROBE_INTERVAL_MS and its listener must hear it (ProfileChangeFeed).
 */
export const PROFILE_CHANGES_PROBE_CHANNEL = 'profile_changes_probe';
