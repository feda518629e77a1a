import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditTrail } from '../access/audit-trail';
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
    private readonly audit: AuditTrail,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async status(profilePathId: ProfilePath): Promise<ExtractionStatus> {
    const profile = await this.profiles.resolve(profilePathId);
    return this.queue.status(profile.id);
  }

  /** Puts the messages extraction gave up on back in the queue and starts on them now; audited. */
  async retryFailed(profilePathId: ProfilePath): Promise<number> {
    const profile = await this.profiles.resolve(profilePathId);
    const requeued = await this.dataSource.transaction(async (manager) => {
      const count = await this.queue.requeueFailed(profile.id, manager);
      await this.audit.record(manager, profilePathId.actor, 'extraction.retry', { profileId: profile.id });
      return count;
    });
    if (requeued > 0) this.background.run('extraction', () => this.worker.schedule(profile.id));
    return requeued;
  }
}
