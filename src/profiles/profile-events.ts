/** Emitted once a profile and everything of it have been deleted (after the commit). */
export const PROFILE_ERASED = 'profile.erased';

export interface ProfileErasedEvent {
  profileId: string;
}
