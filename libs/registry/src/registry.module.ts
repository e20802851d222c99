import { Module } from '@nestjs/common';
import { Clock } from './clock';
import { RegistryService } from './registry.service';

/** RegistryModule: validation, merge rules, last-good copies, bundle status, readiness. */
@Module({
  providers: [Clock, RegistryService],
  exports: [Clock, RegistryService],
})
export class RegistryModule {}
