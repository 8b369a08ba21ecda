/**
 * The private config file of the OpenCode CLI (docs/coding_agents.md "OpenCode"): one
 * OpenAI-compatible provider (Chat Completions) whose key comes from `OPENAI_API_KEY`, updates and
 * sharing off, every permission allowed, and no title request (it would spend tokens the stream
 * never reports).
 */
import type { JsonValue } from "../../_shared/mod.ts";

/** The provider id niceeval writes; the CLI's model is `niceeval/<model>`. */
export const OPENCODE_PROVIDER = "niceeval";

/** The endpoint used when neither the `baseUrl` option nor `OPENAI_BASE_URL` is set. */
export const OPENCODE_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Prices in USD per million tokens; with them the CLI reports a cost per step. */
export interface OpencodePricing {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  readonly cacheReadPerMTok?: number;
  readonly cacheWritePerMTok?: number;
}

/** What the config depends on. */
export interface OpencodeConfigInput {
  readonly model: string;
  readonly baseUrl: string | undefined;
  readonly pricing: OpencodePricing | undefined;
}

/** Renders the config file text (JSON). */
export function opencodeConfig(input: OpencodeConfigInput): string {
  const model: Record<string, JsonValue> = { name: input.model };
  const p = input.pricing;
  if (p !== undefined) {
    model.cost = {
      input: p.inputPerMTok,
      output: p.outputPerMTok,
      cache_read: p.cacheReadPerMTok ?? p.inputPerMTok,
      cache_write: p.cacheWritePerMTok ?? p.inputPerMTok,
    };
  }
  const config = {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    permission: "allow",
    agent: { title: { disable: true } },
    model: `${OPENCODE_PROVIDER}/${input.model}`,
    provider: {
      [OPENCODE_PROVIDER]: {
        npm: "@ai-sdk/openai-compatible",
        name: OPENCODE_PROVIDER,
        options: {
          baseURL: input.baseUrl ?? OPENCODE_DEFAULT_BASE_URL,
          apiKey: "{env:OPENAI_API_KEY}",
        },
        models: { [input.model]: model },
      },
    },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
