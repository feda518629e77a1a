/** The notification channel on which the database sends the id of every profile whose rows changed. */
export const PROFILE_CHANGES_CHANNEL = 'profile_changes';
