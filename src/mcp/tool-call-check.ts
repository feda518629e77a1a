import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * Why a `tools/call` request cannot reach a tool, in words a client can show: params of the wrong types
 * (the name not a string, `arguments` not an object) or a name that is none of `toolNames`. Undefined for
 * any other message, and for a call that may go on. The SDK would answer the first with -32603 and the
 * raw schema errors, and looks names up in a plain object, where `__proto__` and `toString` are found.
 */
export function toolCallProblem(message: JSONRPCMessage, toolNames: ReadonlySet<string>): string | undefined {
  if (!isJSONRPCRequest(message) || message.method !== 'tools/call') return undefined;
  const checked = CallToolRequestSchema.safeParse(message);
  if (!checked.success) {
    const problems = checked.error.issues.map((issue) => {
      const where = issue.path.length > 0 ? issue.path.join('.') : 'the request';
      return `${where}: ${issue.message.replace(/^Invalid input: /, '')}`;
    });
    return `Invalid tools/call params: ${problems.join('; ')}.`;
  }
  const { name } = checked.data.params;
  return toolNames.has(name) ? undefined : `Unknown tool: ${name}.`;
}

/**
 * Answers a `tools/call` that has a `toolCallProblem` with JSON-RPC -32602 (invalid params) through the
 * transport, as the MCP specification does for an unknown tool; every other message goes on to the server.
 * Call after the server connected to the transport (which sets its `onmessage`).
 */
export function refuseInvalidToolCalls(transport: Transport, toolNames: ReadonlySet<string>): void {
  const deliver = transport.onmessage;
  if (deliver === undefined) throw new Error('refuseInvalidToolCalls needs a connected transport');
  transport.onmessage = (message, extra) => {
    const problem = toolCallProblem(message, toolNames);
    if (problem === undefined || !isJSONRPCRequest(message)) return deliver(message, extra);
    void transport.send(
      { jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: problem } },
      { relatedRequestId: message.id },
    );
  };
}
