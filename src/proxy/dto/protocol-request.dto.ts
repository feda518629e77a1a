import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ServiceOptionsDto } from './chat-completion.dto';

/** Documentation of the Responses body; every field not named here is forwarded as it is. */
export class ResponsesRequestDto {
  @ApiProperty({ example: 'gpt-4.1-mini' })
  model: string;

  @ApiPropertyOptional({
    description: 'A string, or input items (messages, function calls and outputs)',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
  })
  input?: unknown;

  @ApiPropertyOptional({ description: 'The profile context is appended to these instructions' })
  instructions?: string;

  @ApiPropertyOptional({ default: false, description: 'Typed server-sent events' })
  stream?: boolean;

  @ApiPropertyOptional({ description: 'The user id, when X-Service-Id and metadata.profile_id are not sent' })
  user?: string;

  @ApiPropertyOptional({ example: { profile_id: 'user-42' } })
  metadata?: object;

  @ApiPropertyOptional({ type: ServiceOptionsDto, description: 'Removed before the request is forwarded' })
  service?: ServiceOptionsDto;
}

/** Documentation of the Anthropic Messages body; every field not named here is forwarded as it is. */
export class MessagesRequestDto {
  @ApiProperty({ example: 'claude-sonnet-4-5' })
  model: string;

  @ApiProperty({ example: 1024 })
  max_tokens: number;

  @ApiProperty({ type: 'array', items: { type: 'object' }, example: [{ role: 'user', content: 'Hello' }] })
  messages: object[];

  @ApiPropertyOptional({
    description: 'A string or text blocks; the profile context is added to it',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
  })
  system?: unknown;

  @ApiPropertyOptional({ default: false })
  stream?: boolean;

  @ApiPropertyOptional({ description: '`user_id` may carry the user id', example: { user_id: 'user-42' } })
  metadata?: object;

  @ApiPropertyOptional({ type: ServiceOptionsDto, description: 'Removed before the request is forwarded' })
  service?: ServiceOptionsDto;
}

/** Documentation of the embeddings body, relayed verbatim. */
export class EmbeddingsRequestDto {
  @ApiProperty({ example: 'text-embedding-3-small' })
  model: string;

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  input: unknown;
}
