import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** Documentation of the chat body. The proxy validates it by hand, so every other field passes through. */
export class ChatMessageDto {
  @ApiProperty({ enum: ['system', 'developer', 'user', 'assistant', 'tool', 'function'] })
  role: string;

  @ApiProperty({
    description: 'A string, an array of content parts, or null (assistant messages with tool_calls)',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
    nullable: true,
  })
  content: unknown;
}

export class ServiceTraitSchemaDto {
  @ApiProperty({ example: 'diet' })
  key: string;

  @ApiPropertyOptional({ enum: ['string', 'enum', 'number', 'boolean', 'array', 'object'] })
  valueType?: string;

  @ApiPropertyOptional({ example: { enabled: true } })
  extraction?: object;

  @ApiPropertyOptional({ example: { enabled: true, template: 'Diet: {{value}}' } })
  injection?: object;
}

export class ServiceOptionsDto {
  @ApiPropertyOptional({
    type: [ServiceTraitSchemaDto],
    description: 'Per-request trait schemas (override by key)',
  })
  traits?: ServiceTraitSchemaDto[];

  @ApiPropertyOptional({ description: 'Do not inject the profile context' })
  skipInjection?: boolean;

  @ApiPropertyOptional({ description: 'Store the turn but do not learn from it' })
  skipExtraction?: boolean;

  @ApiPropertyOptional({
    description: 'Add X-Service-Context-Ids with the injected trait keys and memory ids',
  })
  debug?: boolean;
}

export class ChatCompletionRequestDto {
  @ApiProperty({ example: 'gpt-4o-mini' })
  model: string;

  @ApiProperty({ type: [ChatMessageDto] })
  messages: ChatMessageDto[];

  @ApiPropertyOptional({ default: false })
  stream?: boolean;

  @ApiPropertyOptional({ description: 'The user id, when X-Service-Id is not sent' })
  user?: string;

  @ApiPropertyOptional({
    description: '`profile_id` may carry the user id',
    example: { profile_id: 'user-42' },
  })
  metadata?: object;

  @ApiPropertyOptional({ type: ServiceOptionsDto, description: 'Removed before the request is forwarded' })
  service?: ServiceOptionsDto;
}

export class ChatCompletionChoiceDto {
  @ApiProperty()
  index: number;

  @ApiProperty({ example: { role: 'assistant', content: 'Hallo!' } })
  message: object;

  @ApiProperty({ example: 'stop' })
  finish_reason: string;
}

export class ChatCompletionDto {
  @ApiProperty()
  id: string;

  @ApiProperty({ example: 'chat.completion' })
  object: string;

  @ApiProperty({ description: 'Unix seconds' })
  created: number;

  @ApiProperty()
  model: string;

  @ApiProperty({ type: [ChatCompletionChoiceDto] })
  choices: ChatCompletionChoiceDto[];

  @ApiProperty({ example: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } })
  usage: object;
}

export class ModelDto {
  @ApiProperty({ example: 'gpt-4o-mini' })
  id: string;

  @ApiProperty({ example: 'model' })
  object: string;

  @ApiProperty()
  created: number;

  @ApiProperty({ example: 'openai' })
  owned_by: string;
}

export class ModelListDto {
  @ApiProperty({ example: 'list' })
  object: string;

  @ApiProperty({ type: [ModelDto] })
  data: ModelDto[];
}
