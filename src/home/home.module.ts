import { Module } from '@nestjs/common';
import { HomeController } from './home.controller';

/** The service's root address. */
@Module({ controllers: [HomeController] })
export class HomeModule {}
