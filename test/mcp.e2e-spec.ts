import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LooseJson } from './support/fake-openai-upstream';
import { expectEnvelope, makeMemory, makeProfile } from './support/factories';
import { TestApp, useTestApp } from './support/test-app';

const SERVICE_KEY = 'svc-key-for-mcp-tests';
const TOOLS = ['forget', 'get_profile', 'remember', 'search_memories', 'set_trait'];

/** The official MCP client over Streamable HTTP, as the user of `userId` (no X-Service-Id when null). */
async function connect(t: TestApp, userId: string | null): Promise<Client> {
  const headers: Record<string, string> = { Authorization: `Bearer ${SERVICE_KEY}` };
  if (userId !== null) headers['X-Service-Id'] = userId;
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** The JSON a successful tool call returned. */
function dataOf(result: CallToolResult): LooseJson {
  expect(result.isError).toBeFalsy();
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  return result.structuredContent;
}

describe('MCP server at /mcp (official MCP SDK client)', () => {
  const clients: Client[] = [];
  // before the harness closes the app: a client's close tells the server
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });
  const t = useTestApp({ serviceKey: SERVICE_KEY, env: { EXTRACTOR: 'heuristic' } });
  let seq = 0;
  const nextUser = () => `mcp-user-${++seq}`;
  const open = async (userId: string | null) => {
    const client = await connect(t, userId);
    clients.push(client);
    return client;
  };

  it('lists the memory tools, each with a declared input schema', async () => {
    const client = await open(nextUser());
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
    const search = tools.find((tool) => tool.name === 'search_memories')!;
    expect(search.inputSchema.required).toEqual(['query']);
    expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual(['limit', 'query']);
  });

  it('remembers, finds what it remembered ranked first with a score, and forgets it', async () => {
    const userId = nextUser();
    const client = await open(userId);
    const other = dataOf(
      await callTool(client, 'remember', { content: 'Plays the cello on Sundays', type: 'preference' }),
    );
    const stored = dataOf(
      await callTool(client, 'remember', { content: 'Has a dog called Biscuit', importance: 0.8 }),
    );
    expect(stored.created).toBe(true);
    expect(stored.memory).toEqual(
      expect.objectContaining({ content: 'Has a dog called Biscuit', type: 'fact', importance: 0.8 }),
    );
    // the profile was created on first use, and the memory is the API's
    const listed = await t.admin().get(`/api/profiles/${userId}/memories`);
    expect(listed.status).toBe(200);
    expect(listed.body.memories.map((memory: { id: string }) => memory.id).sort()).toEqual(
      [stored.memory.id, other.memory.id].sort(),
    );

    const found = dataOf(await callTool(client, 'search_memories', { query: 'What is the name of my dog?' }));
    expect(found.memories[0]).toEqual(
      expect.objectContaining({ id: stored.memory.id, content: 'Has a dog called Biscuit', type: 'fact' }),
    );
    expect(found.memories[0].score).toBeGreaterThan(found.memories[1]?.score ?? 0);
    const limited = dataOf(await callTool(client, 'search_memories', { query: 'dog', limit: 1 }));
    expect(limited.memories).toHaveLength(1);

    expect(dataOf(await callTool(client, 'forget', { memoryId: stored.memory.id }))).toEqual({
      deleted: true,
      memoryId: stored.memory.id,
    });
    const after = dataOf(await callTool(client, 'search_memories', { query: 'What is the name of my dog?' }));
    expect(after.memories.map((memory: { id: string }) => memory.id)).toEqual([other.memory.id]);
  });

  it('sets traits checked by their schema and shows them in get_profile', async () => {
    const client = await open(nextUser());
    const set = dataOf(await callTool(client, 'set_trait', { key: 'communication_style', value: 'direct' }));
    expect(set.trait).toEqual(expect.objectContaining({ key: 'communication_style', value: 'direct' }));
    const refused = await callTool(client, 'set_trait', { key: 'communication_style', value: 'shouty' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^invalid_trait_value: /);
    dataOf(await callTool(client, 'remember', { content: 'Lives near the river' }));

    const profile = dataOf(await callTool(client, 'get_profile', {}));
    expect(profile.profile.traits).toEqual([
      expect.objectContaining({ key: 'communication_style', value: 'direct' }),
    ]);
    expect(profile.recentMemories).toEqual([expect.objectContaining({ content: 'Lives near the river' })]);
  });

  it('answers bad arguments with tool errors, never an HTTP failure', async () => {
    const client = await open(nextUser());
    const bad: Array<[string, Record<string, unknown>]> = [
      ['remember', { content: '' }],
      ['remember', { content: 'x'.repeat(10_001) }],
      ['remember', { content: 'ok', type: 'rumour' }],
      ['remember', { content: 'ok', importance: 2 }],
      ['search_memories', { query: '   ' }],
      ['search_memories', { query: 'dog', limit: 0 }],
      ['search_memories', { query: 'dog', limit: 'ten' }],
      ['forget', { memoryId: 'not-a-uuid' }],
      ['set_trait', { key: 'has spaces', value: 'x' }],
      ['set_trait', { key: 'name' }],
    ];
    for (const [name, args] of bad) {
      const result = await callTool(client, name, args);
      expect({ name, args, isError: result.isError }).toEqual({ name, args, isError: true });
    }
    const unknown = await callTool(client, 'forget', { memoryId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^memory_not_found: /);
  });

  it('refuses tools/call params of the wrong types with -32602 and words, not a schema dump', async () => {
    const client = await open(nextUser());
    const refusal = async (params: Record<string, unknown>) => {
      const error = await client.request({ method: 'tools/call', params }, CallToolResultSchema).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(McpError);
      return error as McpError;
    };
    const badName = await refusal({ name: 42, arguments: {} });
    expect(badName.code).toBe(ErrorCode.InvalidParams);
    expect(badName.message).toMatch(/params\.name: expected string, received number/);
    const badArguments = await refusal({ name: 'remember', arguments: 'content=x' });
    expect(badArguments.code).toBe(ErrorCode.InvalidParams);
    expect(badArguments.message).toMatch(/params\.arguments: expected record, received string/);
    for (const error of [badName, badArguments]) expect(error.message).not.toMatch(/[[{]\s*"/);
  });

  it('answers a name that is no tool of its own, __proto__ and toString included, as an unknown tool', async () => {
    const client = await open(nextUser());
    for (const name of ['no_such_tool', '__proto__', 'toString', 'constructor', 'hasOwnProperty']) {
      const error = await client.callTool({ name, arguments: {} }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(McpError);
      expect({ name, code: (error as McpError).code, message: (error as McpError).message }).toEqual({
        name,
        code: ErrorCode.InvalidParams,
        message: `MCP error -32602: Unknown tool: ${name}.`,
      });
    }
    expect(dataOf(await callTool(client, 'get_profile', {}))).toBeDefined();
  });

  it("never reaches another profile's memory", async () => {
    const owner = await makeProfile(t, nextUser());
    const theirs = await makeMemory(t, owner.id, { content: 'Secret of the owner' });
    const intruder = await open(nextUser());
    const result = await callTool(intruder, 'forget', { memoryId: theirs.id });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^memory_not_found: /);
    const found = dataOf(await callTool(intruder, 'search_memories', { query: 'Secret of the owner' }));
    expect(found.memories).toEqual([]);
    const list = await t.admin().get(`/api/profiles/${owner.id}/memories`);
    expect(list.body.memories.map((memory: { id: string }) => memory.id)).toEqual([theirs.id]);
  });

  it('says a tool call needs X-Service-Id, while listing the tools works without it', async () => {
    const client = await open(null);
    expect((await client.listTools()).tools).toHaveLength(TOOLS.length);
    const result = await callTool(client, 'get_profile', {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('missing_user_id: No user id: send X-Service-Id.');
  });

  it('is behind the API key, and takes POST only', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const unauthorised = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(unauthorised.status).toBe(401);
    expectEnvelope(await unauthorised.json(), 'missing_api_key');
    for (const method of ['GET', 'DELETE']) {
      const refused = await fetch(`${t.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${SERVICE_KEY}` },
      });
      expect({ method, status: refused.status }).toEqual({ method, status: 405 });
      expectEnvelope(await refused.json(), 'method_not_allowed');
    }
  });
});
