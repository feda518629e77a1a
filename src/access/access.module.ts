import { Global, Module } from '@nestjs/common';
import { AccessController } from './access.controller';
import { AccessService } from './access.service';
import { ApiKeysRepository } from './api-keys.repository';
import { ApplicationsRepository } from './applications.repository';
import { AuditTrail } from './audit-trail';
import { KeyVerifier } from './key-verifier';

/** Applications, API keys and the audit trail, and the guard that authenticates every request. */
@Global()
@Module({
  controllers: [AccessController],
  providers: [ApplicationsRepository, ApiKeysRepository, AuditTrail, KeyVerifier, AccessService],
  exports: [ApplicationsRepository, ApiKeysRepository, AuditTrail, KeyVerifier],
})
export class AccessModule {}
