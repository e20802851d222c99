import { isJsonEssence, MAX_PARSED_VALUES, textValuesExceed } from '@app/http-body';
import type { CallToolResult } from './call-tool-result';
import { untypedJson, type ToolHttpResponse } from './map-tool-response';

/**
 * A tool's compiled outputSchema, as the catalog carries it (registry's OutputValidator; the
 * same function type is declared here so execution imports no registry): undefined when the
 * value conforms, otherwise the reason (`structuredContent/total must be number`).
 */
export type OutputSchemaCheck = (value: unknown) => string | undefined;

/** The media type of a Content-Type value, lower-cased, without parameters. */
function mediaTypeOf(contentType: string): string {
  return contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

/** What a JSON value is, in words, for a reason text. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a JSON array';
  return `a JSON ${typeof value}`;
}

function refused(toolName: string, result: CallToolResult, reason: string): CallToolResult {
  const [block] = result.content;
  return {
    content: [{ type: 'text', text: `Tool ${toolName} failed: ${reason}`, _meta: block._meta }],
    isError: true,
  };
}

/**
 * Applies a tool's outputSchema to a mapped answer (MCP 2025-11-25 tools: a tool that declares
 * an outputSchema MUST return conforming `structuredContent`, an object; the serialized JSON
 * stays in a text block for older clients):
 * - an isError result is returned as it is (the schema speaks of successful answers);
 * - a 2xx JSON object answer that conforms → the same result plus `structuredContent`;
 * - any other answer (not JSON, empty, an array or a primitive, or an object that does not
 *   conform) → `isError: true` whose text gives the reason. No answer fragment is quoted:
 *   ajv's reason names a path and a rule of the schema.
 * Parses the body once more (only for tools with an outputSchema).
 */
export function applyOutputSchema(
  toolName: string,
  result: CallToolResult,
  response: ToolHttpResponse,
  check: OutputSchemaCheck,
): CallToolResult {
  if (result.isError === true) return result;
  const mime = mediaTypeOf(response.contentType);
  // an answer with no Content-Type that is a JSON object or array is JSON (contract §10)
  if (!isJsonEssence(mime) && !(mime === '' && untypedJson(response) !== undefined)) {
    return refused(
      toolName,
      result,
      `the tool declares an outputSchema, so its answer must be a JSON object, but the Tool Service answered ${mime === '' ? 'without a Content-Type' : mime}.`,
    );
  }
  if (response.body.trim() === '') {
    return refused(
      toolName,
      result,
      'the tool declares an outputSchema, so its answer must be a JSON object, but the Tool Service answered an empty body.',
    );
  }
  if (textValuesExceed(response.body))
    return refused(
      toolName,
      result,
      `the Tool Service answered more than ${MAX_PARSED_VALUES} JSON values, too many to check against the tool's outputSchema.`,
    );
  let value: unknown;
  try {
    value = JSON.parse(response.body);
  } catch {
    return refused(toolName, result, 'the Tool Service answered a body that is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return refused(
      toolName,
      result,
      `the tool declares an outputSchema, so its answer must be a JSON object, but the Tool Service answered ${kindOf(value)}.`,
    );
  }
  const problem = check(value);
  if (problem !== undefined) {
    return refused(
      toolName,
      result,
      `the Tool Service's answer does not match the tool's outputSchema: ${problem}.`,
    );
  }
  return { ...result, structuredContent: value as Record<string, unknown> };
}
