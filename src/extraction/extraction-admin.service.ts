import { Injectable } from '@nestjs/common';
import { BackgroundWork } from '../common/background-work';
import { ProfilesService } from '../profiles/profiles.service';
import { ExtractionQueue, ExtractionStatus } from './extraction-queue';
import { ExtractionWorker } from './extraction-worker';
import type { ProfilePath } from '../profiles/profile-path';

/** What an operator sees and does about a profile's background extraction. */
@Injectable()
export class ExtractionAdminService {
  constructor(
    private readonly profiles: ProfilesService,
    private readonly queue: ExtractionQueue,
    private readonly worker: ExtractionWorker,
    private readonly background: BackgroundWork,
  ) {}

  async status(profilePathId: ProfilePath): Promise<ExtractionStatus> {
    const profile = await this.profiles.resolve(profilePathId);
    return this.queue.status(profile.id);
  }

  /** Puts the messages extraction gave up on back in the queue and starts on them now. */
  async retryFailed(profilePathId: ProfilePath): Promise<number> {
    const profile = await this.profiles.resolve(profilePathId);
    const requeued = await this.queue.requeueFailed(profile.id);
    if (requeued > 0) this.background.run('extraction', () => this.worker.schedule(profile.id));
    return requeued;
  }
}
