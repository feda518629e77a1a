import { Injectable } from '@nestjs/common';
import { ProfilePath } from '../profiles/profile-path';
import { ProfilesService } from '../profiles/profiles.service';
import { TurnPage, TurnsRepository } from './turns.repository';

/** The recent conversation of a profile, for an operator: what was said, answered and injected. */
@Injectable()
export class TurnsService {
  constructor(
    private readonly profiles: ProfilesService,
    private readonly turns: TurnsRepository,
  ) {}

  async list(profilePathId: ProfilePath, query: { limit: number; cursor?: string }): Promise<TurnPage> {
    const profile = await this.profiles.resolve(profilePathId);
    return this.turns.page(profile.id, query.limit, query.cursor ?? null);
  }
}
