import { Global, Module } from '@nestjs/common';
import { JobLeases } from './job-leases';

@Global()
@Module({ providers: [JobLeases], exports: [JobLeases] })
export class JobLeasesModule {}
