import { Module } from '@nestjs/common';
import { EmbeddedMaintenance } from './embedded-maintenance';

@Module({ providers: [EmbeddedMaintenance], exports: [EmbeddedMaintenance] })
export class EmbeddedMaintenanceModule {}
