import { Body, Controller, Get, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiGatewayTimeoutResponse,
  ApiHeader,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { ChatCompletionDto, ChatCompletionRequestDto, ModelListDto } from './dto/chat-completion.dto';
import { EmbeddingsRequestDto, MessagesRequestDto, ResponsesRequestDto } from './dto/protocol-request.dto';
import { chatCompletionsProtocol } from './inbound/chat-completions';
import { messagesProtocol } from './inbound/messages';
import { responsesProtocol } from './inbound/responses';
import { PassThrough } from './pass-through';
import { RelayPipeline } from './relay-pipeline';

@ApiTags('proxy')
@RequiresApiKey()
@RequiresScope('proxy')
@ApiHeader({
  name: 'X-Upstream-Key',
  required: false,
  description: 'Key for the upstream provider (else UPSTREAM_API_KEY)',
})
@ApiBadGatewayResponse({ description: '`upstream_unavailable`', type: ErrorResponseDto })
@ApiGatewayTimeoutResponse({ description: '`upstream_timeout`', type: ErrorResponseDto })
@Controller('v1')
export class ProxyController {
  constructor(
    private readonly pipeline: RelayPipeline,
    private readonly passThrough: PassThrough,
  ) {}

  /**
   * OpenAI-compatible chat completion with memory: the user's profile context is injected, the request
   * is relayed to the upstream (streams included), and the turn is learnt from in the background.
   */
  @Post('chat/completions')
  @HttpCode(HttpStatus.OK)
  @ApiHeader({
    name: 'X-Service-Id',
    required: false,
    description: 'The user id (else metadata.profile_id, else user)',
  })
  @ApiHeader({
    name: 'X-Service-Traits',
    required: false,
    description: 'JSON array of per-request trait schemas',
  })
  @ApiBody({ type: ChatCompletionRequestDto })
  @ApiOkResponse({
    type: ChatCompletionDto,
    description: 'The upstream answer, verbatim; `text/event-stream` chunks when `stream` is true',
  })
  @ApiBadRequestResponse({
    description:
      '`missing_user_id`, `invalid_user_id`, `invalid_messages`, `invalid_model`, `invalid_service_traits`, ...',
    type: ErrorResponseDto,
  })
  async createChatCompletion(
    @Body() body: unknown,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.pipeline.relay(chatCompletionsProtocol, req, res, body);
  }

  /**
   * OpenAI Responses API with memory: the profile context is appended to `instructions`, the request is
   * relayed (typed event streams included; translated for an Anthropic upstream), and the turn is learnt
   * from once `response.completed` arrived.
   */
  @Post('responses')
  @HttpCode(HttpStatus.OK)
  @ApiHeader({
    name: 'X-Service-Id',
    required: false,
    description: 'The user id (else metadata.profile_id, else user)',
  })
  @ApiBody({ type: ResponsesRequestDto })
  @ApiOkResponse({
    description: 'The upstream response object; `text/event-stream` typed events when `stream` is true',
  })
  @ApiBadRequestResponse({
    description: '`missing_user_id`, `invalid_user_id`, `invalid_input`, ...',
    type: ErrorResponseDto,
  })
  async createResponse(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.pipeline.relay(responsesProtocol, req, res, body);
  }

  /**
   * Anthropic Messages API with memory (Anthropic SDK, Claude Code, Claude Agent SDK): the service key is
   * accepted as `x-api-key`, the context is added to `system`, errors come in Anthropic's shape.
   */
  @Post('messages')
  @HttpCode(HttpStatus.OK)
  @ApiHeader({ name: 'X-Service-Id', required: false, description: 'The user id (else metadata.user_id)' })
  @ApiBody({ type: MessagesRequestDto })
  @ApiOkResponse({ description: 'The Messages API answer; `text/event-stream` events when `stream` is true' })
  @ApiBadRequestResponse({
    description: 'Anthropic error shape: `{ type: "error", error: { type, message, code } }`',
  })
  async createMessage(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.pipeline.relay(messagesProtocol, req, res, body);
  }

  /** Embeddings, relayed verbatim to an OpenAI-compatible upstream (no memory involved). */
  @Post('embeddings')
  @HttpCode(HttpStatus.OK)
  @ApiBody({ type: EmbeddingsRequestDto })
  @ApiOkResponse({ description: 'The upstream embeddings answer, verbatim' })
  async createEmbeddings(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    await this.passThrough.embeddings(req, res, body);
  }

  /** The upstream provider's model list. */
  @Get('models')
  @ApiOkResponse({ type: ModelListDto })
  async listModels(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.passThrough.models(req, res);
  }
}
