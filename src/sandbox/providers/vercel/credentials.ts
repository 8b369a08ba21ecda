/**
 * Vercel credentials, read only from the host environment (sandboxes.md rule 130):
 * `VERCEL_TOKEN` with `VERCEL_TEAM_ID` and `VERCEL_PROJECT_ID`, else the SDK's own OIDC
 * environment (`VERCEL_OIDC_TOKEN`). Values never leave this process except towards the API.
 */

/** The variables of an access-token login, in the order they are reported missing. */
export const VERCEL_TOKEN_VARIABLES = ["VERCEL_TOKEN", "VERCEL_TEAM_ID", "VERCEL_PROJECT_ID"];
/** The SDK's OIDC variable, used when `VERCEL_TOKEN` is absent. */
export const VERCEL_OIDC_VARIABLE = "VERCEL_OIDC_TOKEN";

/** What each companion of `VERCEL_TOKEN` holds, for hints. */
const COMPANIONS: Readonly<Record<string, string>> = {
  VERCEL_TEAM_ID: "the id of the team that owns the sandboxes",
  VERCEL_PROJECT_ID: "the id of the project the sandboxes belong to",
};

/** Explicit credentials for the SDK. */
export interface VercelCredentials {
  readonly token: string;
  readonly teamId: string;
  readonly projectId: string;
}

/**
 * The explicit credentials when `VERCEL_TOKEN` and its two companions are set; undefined when the
 * SDK is left to its OIDC environment.
 */
export function vercelCredentials(
  env: Readonly<Record<string, string>>,
): VercelCredentials | undefined {
  const [token, teamId, projectId] = VERCEL_TOKEN_VARIABLES.map((name) => env[name] || undefined);
  if (token === undefined || teamId === undefined || projectId === undefined) return undefined;
  return { token, teamId, projectId };
}

/**
 * Null when the environment holds usable credentials; else the missing variable, named exactly,
 * and how to supply it.
 */
export function vercelPrecondition(
  env: Readonly<Record<string, string>>,
): { readonly message: string; readonly hint: string } | null {
  const set = (name: string) => typeof env[name] === "string" && env[name] !== "";
  if (set("VERCEL_TOKEN")) {
    const missing = VERCEL_TOKEN_VARIABLES.filter((name) => !set(name));
    if (missing.length === 0) return null;
    return {
      message: `${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} not set ` +
        "(VERCEL_TOKEN needs VERCEL_TEAM_ID and VERCEL_PROJECT_ID)",
      hint: `export ${missing.map((name) => `${name} (${COMPANIONS[name]})`).join(" and ")}`,
    };
  }
  if (set(VERCEL_OIDC_VARIABLE)) return null;
  return {
    message: `VERCEL_TOKEN is not set (nor ${VERCEL_OIDC_VARIABLE})`,
    hint: "export VERCEL_TOKEN, VERCEL_TEAM_ID and VERCEL_PROJECT_ID, or VERCEL_OIDC_TOKEN",
  };
}
