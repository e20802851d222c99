import { Module } from '@nestjs/common';
import { SampleToolsController } from './sample-tools.controller';

@Module({ controllers: [SampleToolsController] })
export class SampleToolServiceModule {}
