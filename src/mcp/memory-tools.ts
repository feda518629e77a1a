import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ApiError } from '../common/api-error';
import { toApiError } from '../common/all-exceptions.filter';
import { LineWriter } from '../common/request-logger';
import { APP_VERSION } from '../app-info';
import { MAX_MEMORY_CONTENT_LENGTH } from '../memories/dto/memory-request.dto';
import { MEMORY_TYPES } from '../memories/memory.entity';
import { MAX_QUESTION_CHARS } from '../memories/memory-candidates';
import { TRAIT_KEY_PATTERN } from '../traits/trait-schema';
import { MemoryToolsService } from './memory-tools.service';
import type { Actor } from '../common/request-access';

/** The most memories `search_memories` returns. */
export const MAX_SEARCH_LIMIT = 50;

/** A user of the tools: the id from the request's X-Service-Id header, in the request's application. */
export interface McpUser {
  applicationId: string;
  userId: string;
  actor: Actor;
}

/**
 * The user the tools act for, or why there is none (a tool call then fails with that message, while
 * listing the tools still works).
 */
export type ToolUser = McpUser | { problem: ApiError };

/** The memory tools' server, and the names of its tools. */
export interface MemoryToolsServer {
  server: McpServer;
  toolNames: ReadonlySet<string>;
}

/** One MCP server per request (stateless Streamable HTTP): the memory tools, bound to the request's user. */
export function createMemoryToolsServer(
  tools: MemoryToolsService,
  user: ToolUser,
  logger: LineWriter,
): MemoryToolsServer {
  const server = new McpServer({ name: 'profile-memory-service', version: APP_VERSION });
  const toolNames = new Set<string>();
  // the handler of each tool registered below, under the name it is registered with
  const call = <A>(name: string, work: (userId: McpUser, args: A) => Promise<unknown>) => {
    toolNames.add(name);
    return async (args: A): Promise<CallToolResult> => {
      try {
        if ('problem' in user) throw user.problem;
        return resultOf(await work(user, args));
      } catch (error) {
        return errorOf(toApiError(error, logger, `MCP tool ${name}`));
      }
    };
  };

  server.registerTool(
    'search_memories',
    {
      description:
        "The user's memories that best answer a query, ranked as the proxy ranks what it injects, with their scores.",
      inputSchema: {
        query: z.string().trim().min(1).max(MAX_QUESTION_CHARS).describe('What to look for, in words.'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_SEARCH_LIMIT)
          .optional()
          .describe('At most this many (default 10).'),
      },
    },
    call('search_memories', (userId, args: { query: string; limit?: number }) =>
      tools.search(userId, args.query, args.limit ?? 10),
    ),
  );

  server.registerTool(
    'remember',
    {
      description: 'Stores a memory about the user. Saying the same thing again does not add a copy.',
      inputSchema: {
        content: z
          .string()
          .trim()
          .min(1)
          .max(MAX_MEMORY_CONTENT_LENGTH)
          .describe('The fact, preference, event or context.'),
        type: z.enum(MEMORY_TYPES).optional().describe('Default fact.'),
        importance: z.number().min(0).max(1).optional().describe('0 to 1; default 0.5.'),
      },
    },
    call(
      'remember',
      (userId, args: { content: string; type?: (typeof MEMORY_TYPES)[number]; importance?: number }) =>
        tools.remember(userId, args.content, args.type ?? 'fact', args.importance ?? 0.5),
    ),
  );

  server.registerTool(
    'forget',
    {
      description:
        "Deletes one of the user's memories by its id (as search_memories or get_profile return it).",
      inputSchema: { memoryId: z.string().uuid().describe('The memory id.') },
    },
    call('forget', (userId, args: { memoryId: string }) => tools.forget(userId, args.memoryId)),
  );

  server.registerTool(
    'get_profile',
    {
      description: "The user's summary, traits and most recent memories.",
      inputSchema: {},
    },
    call('get_profile', (userId) => tools.profile(userId)),
  );

  server.registerTool(
    'set_trait',
    {
      description:
        'Sets a trait of the user by hand; the value is checked against the trait schema of its key.',
      inputSchema: {
        key: z.string().regex(TRAIT_KEY_PATTERN).describe('The trait key, for example preferred_language.'),
        value: z
          .union([
            z.string(),
            z.number(),
            z.boolean(),
            z.array(z.unknown()),
            z.record(z.string(), z.unknown()),
          ])
          .describe(
            "The value: text, a number, true or false, a list or an object, as the key's schema says.",
          ),
      },
    },
    call('set_trait', (userId, args: { key: string; value: unknown }) =>
      tools.setTrait(userId, args.key, args.value),
    ),
  );

  return { server, toolNames };
}

function resultOf(value: unknown): CallToolResult {
  const structured = value as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: structured };
}

function errorOf(error: ApiError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }] };
}
