import { Controller, Delete, Get, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { ErrorResponseDto } from '../common/error-response.dto';
import { RequiresApiKey, RequiresScope } from '../common/public.decorator';
import { requestLogger } from '../common/request-logger';
import { resolveUserId, userIdHeader } from '../proxy/user-id';
import { createMemoryToolsServer, ToolUser } from './memory-tools';
import { MemoryToolsService } from './memory-tools.service';
import { accessOf, actorOf } from '../common/request-access';
import { refuseInvalidToolCalls } from './tool-call-check';

/**
 * The memory as MCP tools, over Streamable HTTP without sessions: every POST carries one JSON-RPC
 * message and gets its answer as JSON, so any replica can answer any call and nothing is kept between
 * requests. Server-initiated streams (GET) and session ends (DELETE) have nothing to serve.
 */
@ApiTags('mcp')
@RequiresApiKey()
@RequiresScope('proxy')
@Controller('mcp')
export class McpController {
  constructor(private readonly tools: MemoryToolsService) {}

  /** One MCP JSON-RPC message (initialize, tools/list, tools/call ...) for the user of X-Service-Id. */
  @Post()
  @ApiHeader({ name: 'X-Service-Id', required: true, description: 'The user the tools act for' })
  @ApiBody({
    description: 'A JSON-RPC 2.0 message of the Model Context Protocol',
    schema: { type: 'object' },
  })
  @ApiOkResponse({
    description: 'The JSON-RPC answer (tools: search_memories, remember, forget, get_profile, set_trait)',
  })
  async handle(@Req() req: Request, @Res() res: Response): Promise<void> {
    const { server, toolNames } = createMemoryToolsServer(
      this.tools,
      toolUser(req),
      requestLogger(req, 'McpController'),
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    refuseInvalidToolCalls(transport, toolNames);
    await transport.handleRequest(req, res, req.body);
  }

  /** Not served: the server sends nothing unasked (no stream to open). */
  @Get()
  @ApiResponse({ status: 405, description: '`method_not_allowed`', type: ErrorResponseDto })
  openStream(): never {
    throw postOnly();
  }

  /** Not served: the server keeps no sessions to end. */
  @Delete()
  @ApiResponse({ status: 405, description: '`method_not_allowed`', type: ErrorResponseDto })
  endSession(): never {
    throw postOnly();
  }
}

function postOnly(): ApiError {
  return new ApiError(
    HttpStatus.METHOD_NOT_ALLOWED,
    'method_not_allowed',
    'The MCP endpoint takes POST only (stateless Streamable HTTP).',
  );
}

function toolUser(req: Request): ToolUser {
  try {
    return {
      applicationId: accessOf(req).application.id,
      userId: resolveUserId([userIdHeader(req.headers)]),
      actor: actorOf(req),
    };
  } catch (error) {
    if (error instanceof ApiError) return { problem: error };
    throw error;
  }
}
