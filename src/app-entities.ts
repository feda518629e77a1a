import { MemoryEmbeddingEntity } from './embeddings/memory-embedding.entity';
import { MemoryEntity } from './memories/memory.entity';
import { MessageEntity } from './messages/message.entity';
import { ProfileEntity } from './profiles/profile.entity';
import { TraitEntity } from './traits/trait.entity';

/** The entity classes of the app's data source (AppModule and the TypeORM CLI's ormconfig.ts). */
export const APP_ENTITIES = [ProfileEntity, TraitEntity, MemoryEntity, MemoryEmbeddingEntity, MessageEntity];
