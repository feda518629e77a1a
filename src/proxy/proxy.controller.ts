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
import { RequiresApiKey } from '../common/public.decorator';
import { ChatCompletionDto, ChatCompletionRequestDto, ModelListDto } from './dto/chat-completion.dto';
import { chatCompletionsProtocol } from './inbound/chat-completions';
import { PassThrough } from './pass-through';
import { RelayPipeline } from './relay-pipeline';

@ApiTags('proxy')
@RequiresApiKey()
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

  /** The upstream provider's model list. */
  @Get('models')
  @ApiOkResponse({ type: ModelListDto })
  async listModels(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.passThrough.models(req, res);
  }
}
