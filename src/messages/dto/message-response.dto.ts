import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../../common/iso';
import { MessageEntity } from '../message.entity';

export class MessageDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'user', description: 'user or assistant' })
  role: string;

  @ApiProperty()
  content: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export function toMessageDto(message: MessageEntity): MessageDto {
  return { id: message.id, role: message.role, content: message.content, createdAt: iso(message.createdAt) };
}
