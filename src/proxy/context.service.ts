import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MemoryRetrieval } from '../memories/memory-retrieval';
import { ProfileEntity } from '../profiles/profile.entity';
import { TraitSchema } from '../traits/trait-schema';
import { TraitEntity } from '../traits/trait.entity';
import { BuiltContext, buildContextText, ContextTrait } from './context-text';

/** Template and priority of traits that have no schema (custom traits written through the API). */
const UNSCHEMED_TRAIT_PRIORITY = 0;

/** What the proxy injects for one request: summary, injection-enabled traits and relevant memories. */
@Injectable()
export class ContextService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly retrieval: MemoryRetrieval,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async build(profile: ProfileEntity, schemas: TraitSchema[], question: string): Promise<BuiltContext> {
    const storedTraits = await this.dataSource
      .getRepository(TraitEntity)
      .find({ where: { profileId: profile.id }, order: { key: 'ASC' } });
    const memories =
      this.config.context.maxMemories > 0
        ? await this.retrieval.relevant(profile.id, question, this.config.context.maxMemories)
        : [];
    const schemaByKey = new Map(schemas.map((schema) => [schema.key, schema]));
    const traits: ContextTrait[] = [];
    for (const trait of storedTraits) {
      const schema = schemaByKey.get(trait.key);
      if (schema && !schema.injection.enabled) continue;
      traits.push({
        key: trait.key,
        value: trait.value,
        template: schema?.injection.template ?? `${trait.key}: {{value}}`,
        priority: schema?.injection.priority ?? UNSCHEMED_TRAIT_PRIORITY,
      });
    }
    return buildContextText({ summary: profile.summary, traits, memories }, this.config.context);
  }

  /** Injected memories count as used: their decay stops from now. */
  touchMemories(profileId: string, memoryIds: string[]): Promise<void> {
    return this.retrieval.touch(profileId, memoryIds);
  }
}
