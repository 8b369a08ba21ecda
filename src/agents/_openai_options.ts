/**
 * Options of `openAICompatibleAgent` (authoring.md §8.2): their types, their validation into a
 * frozen copy, and the configuration identity (no secrets, no header values).
 */
import { DefinitionError } from "../_shared/mod.ts";
import { deepFreeze, isPlainObject, type JsonValue } from "../_shared/mod.ts";
import { check, checkOptions, describe } from "../_shared/mod.ts";
import { jsonProblem } from "./_problem.ts";
import type { AgentContext } from "./types.ts";

/** One tool offered to the model. */
export interface OpenAITool {
  name: string;
  description?: string;
  /** The JSON Schema of the tool's arguments. */
  parameters: JsonValue;
  /**
   * Runs the tool on the host; its result is sent back to the model. Without it a call stays
   * pending and the turn ends.
   */
  execute?(input: JsonValue, ctx: AgentContext): JsonValue | Promise<JsonValue>;
}

/** Options of `openAICompatibleAgent`. */
export interface OpenAICompatibleAgentOptions {
  /** Requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  /**
   * The environment variable holding the key, read at send time and sent as
   * `Authorization: Bearer`. It must be set and non-empty: an experiment whose variable is unset
   * starts no Attempt. `null`: the endpoint needs no key; no header is sent and nothing is checked.
   * @default "OPENAI_API_KEY"
   */
  apiKeyEnv?: string | null;
  /** @default "openai-compatible" */
  name?: string;
  /** Used when the experiment sets no model. */
  defaultModel?: string;
  /** The system message of every request. */
  system?: string;
  tools?: readonly OpenAITool[];
  /** Follow-up requests after executed tool calls, per send. @default 8 */
  maxToolRounds?: number;
  headers?: Record<string, string>;
  /** Extra request fields; may not set `model`, `messages`, `tools` or `stream`. */
  body?: Record<string, JsonValue>;
}

/** The validated options. */
export interface CheckedOpenAIOptions {
  readonly name: string;
  /** Without trailing slashes. */
  readonly baseUrl: string;
  /** Null when the endpoint needs no key. */
  readonly apiKeyEnv: string | null;
  readonly defaultModel: string | undefined;
  readonly system: string | undefined;
  readonly tools: readonly OpenAITool[];
  readonly maxToolRounds: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, JsonValue>>;
  readonly identity: JsonValue;
}

const WHAT = "openAICompatibleAgent()";
const TABLE = {
  known: [
    "baseUrl",
    "apiKeyEnv",
    "name",
    "defaultModel",
    "system",
    "tools",
    "maxToolRounds",
    "headers",
    "body",
  ],
  required: ["baseUrl"],
} as const;
/** Request fields niceeval sets itself. */
const OWN_BODY_FIELDS = ["model", "messages", "tools", "stream"];
const ENV_NAME_REGEXP = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Validates the options; throws `DefinitionError` on the first problem. */
export function checkOpenAIOptions(opts: unknown, namePattern: RegExp): CheckedOpenAIOptions {
  const options = checkOptions(opts, TABLE, WHAT);
  const baseUrl = checkBaseUrl(options.baseUrl);
  const name = options.name === undefined
    ? "openai-compatible"
    : check.string(options.name, "name", WHAT, { pattern: namePattern });
  const apiKeyEnv = options.apiKeyEnv === undefined
    ? "OPENAI_API_KEY"
    : options.apiKeyEnv === null
    ? null
    : check.string(options.apiKeyEnv, "apiKeyEnv", WHAT, { pattern: ENV_NAME_REGEXP });
  const defaultModel = options.defaultModel === undefined
    ? undefined
    : check.string(options.defaultModel, "defaultModel", WHAT, { nonEmpty: true });
  const system = options.system === undefined
    ? undefined
    : check.string(options.system, "system", WHAT);
  const maxToolRounds = options.maxToolRounds === undefined
    ? 8
    : checkRounds(options.maxToolRounds);
  const tools = checkTools(options.tools ?? []);
  const headers = checkHeaders(options.headers ?? {});
  const body = checkBody(options.body ?? {});
  const identity = identityOf({ baseUrl, system, tools, body, headers });
  return {
    name,
    baseUrl,
    apiKeyEnv,
    defaultModel,
    system,
    tools,
    maxToolRounds,
    headers,
    body,
    identity,
  };
}

/** The configuration identity (rule 6): no key variable, no header values, no functions. */
function identityOf(parts: {
  baseUrl: string;
  system: string | undefined;
  tools: readonly OpenAITool[];
  body: Readonly<Record<string, JsonValue>>;
  headers: Readonly<Record<string, string>>;
}): JsonValue {
  return deepFreeze({
    baseUrl: parts.baseUrl,
    system: parts.system ?? null,
    tools: parts.tools.map((tool) => ({
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters,
    })),
    body: parts.body,
    headers: Object.keys(parts.headers).sort(),
  }) as JsonValue;
}

function checkBaseUrl(value: unknown): string {
  const text = check.string(value, "baseUrl", WHAT, { nonEmpty: true });
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    invalid("baseUrl", "an absolute http(s) URL", value);
  }
  return text.replace(/\/+$/, "");
}

function checkRounds(value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    invalid("maxToolRounds", "an integer ≥ 0", value);
  }
  return value;
}

function checkTools(value: unknown): readonly OpenAITool[] {
  if (!Array.isArray(value)) invalid("tools", "an array of tools", value);
  const seen = new Set<string>();
  const tools = value.map((entry, i) => {
    const at = `tools[${i}]`;
    const table = {
      known: ["name", "description", "parameters", "execute"],
      required: ["name", "parameters"],
    };
    const tool = checkOptions(entry, table, WHAT, at);
    const name = check.string(tool.name, `${at}.name`, WHAT, { nonEmpty: true });
    if (seen.has(name)) invalid(`${at}.name`, "unique among the tools", name);
    seen.add(name);
    const out: OpenAITool = { name, parameters: checkJson(tool.parameters, `${at}.parameters`) };
    if (tool.description !== undefined) {
      out.description = check.string(tool.description, `${at}.description`, WHAT);
    }
    if (tool.execute !== undefined) {
      out.execute = check.function(tool.execute, `${at}.execute`, WHAT);
    }
    return Object.freeze(out);
  });
  return Object.freeze(tools);
}

function checkHeaders(value: unknown): Readonly<Record<string, string>> {
  if (!isPlainObject(value)) invalid("headers", "an object of header strings", value);
  const out: Record<string, string> = {};
  for (const [key, header] of Object.entries(value)) {
    if (header === undefined) continue;
    const at = `headers.${key}`;
    const text = check.string(header, at, WHAT);
    try {
      new Headers([[key, text]]);
    } catch {
      // The value is never quoted: it may be a secret.
      throw new DefinitionError(
        "definition.invalid-value",
        at,
        `${WHAT}: ${at} must be a valid HTTP header name and value`,
      );
    }
    out[key] = text;
  }
  return Object.freeze(out);
}

function checkBody(value: unknown): Readonly<Record<string, JsonValue>> {
  const body = check.jsonObject(value, "body", WHAT);
  for (const key of OWN_BODY_FIELDS) {
    if (key in body) {
      throw new DefinitionError(
        "definition.invalid-value",
        `body.${key}`,
        `${WHAT}: body.${key} cannot be set: niceeval sets model, messages, tools and stream itself`,
      );
    }
  }
  return body;
}

function checkJson(value: unknown, path: string): JsonValue {
  const found = jsonProblem(value, path);
  if (found) {
    throw new DefinitionError("definition.invalid-value", found.path, `${WHAT}: ${found.message}`);
  }
  return deepFreeze(structuredClone(value)) as JsonValue;
}

function invalid(path: string, expected: string, value: unknown): never {
  throw new DefinitionError(
    "definition.invalid-value",
    path,
    `${WHAT}: ${path} must be ${expected}, got ${describe(value)}`,
  );
}
