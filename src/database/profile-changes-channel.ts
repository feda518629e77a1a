/** The notification channel on which the database sends the id of every profile whose rows changed. */
export const PROFILE_CHANGES_CHANNEL = 'profile_changes';
/** The payload that stands for every profile (a statement that changed too many to name them). */
export const EVERY_PROFILE = '*';
