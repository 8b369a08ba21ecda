/**
 * The private `config.toml` of the Codex CLI (docs/coding_agents.md "Codex"): one model provider
 * that speaks the Responses API to the endpoint and reads its key from `OPENAI_API_KEY`, with update
 * checks, plugins (which contact a remote host at start), analytics and telemetry off.
 */

/** The provider id niceeval writes; `-c model_providers.niceeval.<key>=…` overrides its keys. */
export const CODEX_PROVIDER = "niceeval";

/** The endpoint used when neither the `baseUrl` option nor `OPENAI_BASE_URL` is set. */
export const CODEX_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** What the config depends on. */
export interface CodexConfigInput {
  /** The model slug; absent = the CLI's default. */
  readonly model: string | undefined;
  /** The Responses API endpoint (`…/v1`); absent = {@link CODEX_DEFAULT_BASE_URL}. */
  readonly baseUrl: string | undefined;
}

/** Renders the config file text; strings are TOML basic strings. */
export function codexConfig(input: CodexConfigInput): string {
  const lines = [
    "# Written by niceeval for one agent run; every key can be overridden with `-c key=value`.",
    ...(input.model === undefined ? [] : [`model = ${str(input.model)}`]),
    `model_provider = ${str(CODEX_PROVIDER)}`,
    "check_for_update_on_startup = false",
    "",
    `[model_providers.${CODEX_PROVIDER}]`,
    `name = ${str(CODEX_PROVIDER)}`,
    `base_url = ${str(input.baseUrl ?? CODEX_DEFAULT_BASE_URL)}`,
    `env_key = "OPENAI_API_KEY"`,
    `wire_api = "responses"`,
    "",
    "[features]",
    "plugins = false",
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[otel]",
    `exporter = "none"`,
    "",
    "[history]",
    `persistence = "none"`,
    "",
  ];
  return lines.join("\n");
}

/** A TOML basic string: JSON's escapes are valid TOML escapes; TOML also forbids a raw DEL. */
function str(value: string): string {
  return JSON.stringify(value).replaceAll("\x7f", "\\u007F");
}
